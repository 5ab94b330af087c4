import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';

export const reconcileScheduleId = (taskQueue: string) => `reconcile/${taskQueue}`;

/**
 * The reconciler's schedule (DESIGN.md §4): created by whichever worker starts first, brought in line with its
 * interval by every later one. One run at a time; its workflow runs on this task queue, whose workers carry this
 * instance's label, so a run only ever judges its own instance's engine objects.
 */
export async function ensureReconcileSchedule(client: Client, opts: { taskQueue: string; everyS: number }) {
  const scheduleId = reconcileScheduleId(opts.taskQueue);
  const spec = { intervals: [{ every: opts.everyS * 1000 }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'reconcileWorkflow',
    workflowId: `reconcile/${opts.taskQueue}/run`,
    taskQueue: opts.taskQueue,
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      memo: { purpose: 'Removes engine objects of destroyed or unknown deployments; finishes half-done destroys' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action }));
  }
  return client.schedule.getHandle(scheduleId);
}
