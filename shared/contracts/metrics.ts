/**
 * The metrics workflows' contract: their type names, their schedules' IDs and their reports, no workflow code
 * (docs/architecture.md, "Layers and where code goes"). The names are the exported functions' names in
 * workflows/metrics/workflow.ts, which the worker registers.
 */
export const METRICS_WORKFLOWS = {
  sample: 'sampleMetricsWorkflow',
  sweep: 'sweepMetricsWorkflow',
} as const;

export const metricsSampleScheduleId = (taskQueue: string) => `metrics-sample/${taskQueue}`;
export const metricsSweepScheduleId = (taskQueue: string) => `metrics-sweep/${taskQueue}`;

/** What one sample read: deployments with running instances, and those instances. */
export interface SampleReport {
  deployments: number;
  instances: number;
  /** Hosts of ours in the edge router's reading, when it was read. */
  hosts?: number;
}

export interface SweepReport {
  removed: number;
}
