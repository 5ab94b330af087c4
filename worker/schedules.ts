import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';

import { type OutboxSweepInput, webhookOutboxScheduleId } from '../shared/sales/outbox';

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

/**
 * The sales outbox sweep (shared/sales/outbox.ts): starts the delivery of every pending event whose workflow never
 * started or ended without an endpoint. Overlapping runs are skipped; the api triggers a run when a webhook is saved.
 */
export async function ensureWebhookOutboxSchedule(
  client: Client,
  opts: { taskQueue: string; everyS: number; sweep: OutboxSweepInput },
) {
  const scheduleId = webhookOutboxScheduleId(opts.taskQueue);
  const spec = { intervals: [{ every: opts.everyS * 1000 }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: 'webhookOutboxWorkflow',
    workflowId: `${scheduleId}/run`,
    taskQueue: opts.taskQueue,
    args: [opts.sweep],
  };
  try {
    await client.schedule.create({
      scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      memo: { purpose: 'Starts the delivery of sales events that have none running' },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(scheduleId).update((previous) => ({ ...previous, spec, action }));
  }
  return client.schedule.getHandle(scheduleId);
}
