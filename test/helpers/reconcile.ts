import type { ReconcileReport } from '@shared/contracts/reconcile';
import { ensureReconcileSchedule } from '@worker/schedules';

import { eventually, type Harness } from './harness';

/** Runs the reconcile schedule's action now, as its schedule would, and returns what its workflow reports. */
export async function runReconcileSchedule(h: Harness): Promise<ReconcileReport> {
  const schedule = await ensureReconcileSchedule(h.temporal, { taskQueue: h.taskQueue, everyS: 3600 });
  const before = (await schedule.describe()).info.recentActions.length;
  await schedule.trigger();
  const action = await eventually(async () => {
    const recent = (await schedule.describe()).info.recentActions;
    return recent.length > before ? recent[recent.length - 1] : undefined;
  }, 'the schedule to start its workflow');
  return h.temporal.workflow.getHandle(action.action.workflow.workflowId).result() as Promise<ReconcileReport>;
}
