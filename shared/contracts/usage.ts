/**
 * The usage roll-up's contract (docs/architecture.md, "Usage"): its workflow's type name, its schedule's ID and its
 * report, no workflow code. The name is the exported function's in workflows/usage/workflow.ts.
 */
export const USAGE_ROLLUP_WORKFLOW = 'rollUpUsageWorkflow';

export const usageRollupScheduleId = (taskQueue: string) => `usage-rollup/${taskQueue}`;

/** The hours one run rolled up (ISO starts) and the records it wrote for them. */
export interface RollupReport {
  hours: string[];
  records: number;
}
