import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';

export const uploadExpiryScheduleId = (taskQueue: string) => `upload-expiry/${taskQueue}`;

/**
 * The schedule that deletes expired uploads, created by whichever worker starts first and brought in line
 * with its configured interval by every later one. Overlapping runs are skipped: one sweep at a time.
 */
export async function ensureUploadExpirySchedule(client: Client, opts: { taskQueue: string; everyS: number }) {
  const scheduleId = uploadExpiryScheduleId(opts.taskQueue);
  const spec = { intervals: [{ every: opts.everyS * 1000 }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'expireUploadsWorkflow',
    workflowId: `upload-expiry/${opts.taskQueue}/run`,
    taskQueue: opts.taskQueue,
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      memo: { purpose: 'Deletes expired zip uploads and their records' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action }));
  }
  return client.schedule.getHandle(scheduleId);
}
