import { proxyActivities } from '@temporalio/workflow';

import type { UsageActivities } from '@activities/usage';
import type { RollupReport } from '@shared/contracts/usage';

// Every hour is done at most once and a run stopped half-way is finished by the next: retry freely, but one run at a
// time (the schedule skips overlaps) and never long enough to reach the sweep of what it reads.
const { rollUpUsage } = proxyActivities<UsageActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** Run by the usage-rollup schedule: rolls every closed hour not yet rolled up into immutable usage records. */
export async function rollUpUsageWorkflow(): Promise<RollupReport> {
  return rollUpUsage();
}
