import { proxyActivities } from '@temporalio/workflow';

import type { MetricsActivities } from '@activities/metrics';
import type { SampleReport, SweepReport } from '@shared/contracts/metrics';

// A sample missed is only a gap in a chart: retry briefly, never pile runs up behind a slow engine.
const { sampleMetrics } = proxyActivities<MetricsActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 2 },
});
const { sweepMetrics } = proxyActivities<MetricsActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** Run by the metrics-sample schedule: one sample of every running instance (GET …/container-metrics/history). */
export async function sampleMetricsWorkflow(): Promise<SampleReport> {
  return sampleMetrics();
}

/** Run by the metrics-sweep schedule: deletes samples past METRICS_RETENTION_H. */
export async function sweepMetricsWorkflow(): Promise<SweepReport> {
  return sweepMetrics();
}
