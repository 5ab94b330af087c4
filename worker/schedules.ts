import { type Client, ScheduleAlreadyRunning, ScheduleOverlapPolicy } from '@temporalio/client';

import { METRICS_WORKFLOWS, metricsSampleScheduleId, metricsSweepScheduleId } from '@shared/contracts/metrics';
import { RECONCILE_WORKFLOW, reconcileScheduleId } from '@shared/contracts/reconcile';
import { UPLOAD_EXPIRY_WORKFLOW, uploadExpiryScheduleId } from '@shared/contracts/upload-expiry';
import { USAGE_ROLLUP_WORKFLOW, usageRollupScheduleId } from '@shared/contracts/usage';
import { type OutboxSweepInput, WEBHOOK_WORKFLOWS, webhookOutboxScheduleId } from '@shared/contracts/webhook-delivery';

interface IntervalSchedule {
  scheduleId: string;
  workflowType: string;
  taskQueue: string;
  everyS: number;
  args?: unknown[];
  /** Shown in the Temporal UI beside the schedule. */
  purpose: string;
}

/**
 * A schedule created by whichever worker starts first and brought in line with its configured interval and action
 * by every later one. Overlapping runs are skipped: one run at a time, whatever the interval. Each run's workflow
 * runs on the schedule's task queue, so it only ever judges the objects of the instance that owns that queue.
 */
async function ensureIntervalSchedule(client: Client, s: IntervalSchedule) {
  const spec = { intervals: [{ every: s.everyS * 1000 }] };
  const action = {
    type: 'startWorkflow' as const,
    workflowType: s.workflowType,
    workflowId: `${s.scheduleId}/run`,
    taskQueue: s.taskQueue,
    ...(s.args ? { args: s.args } : {}),
  };
  try {
    await client.schedule.create({
      scheduleId: s.scheduleId,
      spec,
      action,
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
      memo: { purpose: s.purpose },
    });
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    await client.schedule.getHandle(s.scheduleId).update((previous) => ({ ...previous, spec, action }));
  }
  return client.schedule.getHandle(s.scheduleId);
}

/** Deletes expired zip uploads and their S3 objects. */
export const ensureUploadExpirySchedule = (client: Client, opts: { taskQueue: string; everyS: number }) =>
  ensureIntervalSchedule(client, {
    scheduleId: uploadExpiryScheduleId(opts.taskQueue),
    workflowType: UPLOAD_EXPIRY_WORKFLOW,
    ...opts,
    purpose: 'Deletes expired zip uploads and their records',
  });

/**
 * The sales outbox sweep (shared/contracts/webhook-delivery.ts): starts the delivery of every pending event whose workflow never
 * started or ended without an endpoint. The api triggers a run when a webhook is saved.
 */
export const ensureWebhookOutboxSchedule = (
  client: Client,
  opts: { taskQueue: string; everyS: number; sweep: OutboxSweepInput },
) =>
  ensureIntervalSchedule(client, {
    scheduleId: webhookOutboxScheduleId(opts.taskQueue),
    workflowType: WEBHOOK_WORKFLOWS.outbox,
    taskQueue: opts.taskQueue,
    everyS: opts.everyS,
    args: [opts.sweep],
    purpose: 'Starts the delivery of sales events that have none running',
  });

/**
 * The reconciler (docs/architecture.md, "A deployment's lifecycle, as workflows"): removes this instance's engine
 * objects of destroyed or unknown deployments.
 */
export const ensureReconcileSchedule = (client: Client, opts: { taskQueue: string; everyS: number }) =>
  ensureIntervalSchedule(client, {
    scheduleId: reconcileScheduleId(opts.taskQueue),
    workflowType: RECONCILE_WORKFLOW,
    ...opts,
    purpose: 'Removes engine objects of destroyed or unknown deployments; finishes half-done destroys',
  });

/**
 * The metrics history (workflows/metrics/workflow.ts): one schedule samples every running instance every `sampleEveryS`
 * (one run for all deployments, not a loop per deployment), another deletes samples past the retention.
 */
export async function ensureMetricsSchedules(
  client: Client,
  opts: { taskQueue: string; sampleEveryS: number; sweepEveryS: number },
) {
  const sample = await ensureIntervalSchedule(client, {
    scheduleId: metricsSampleScheduleId(opts.taskQueue),
    workflowType: METRICS_WORKFLOWS.sample,
    taskQueue: opts.taskQueue,
    everyS: opts.sampleEveryS,
    purpose: 'Records the resource use of every running deployment instance (metrics history)',
  });
  const sweep = await ensureIntervalSchedule(client, {
    scheduleId: metricsSweepScheduleId(opts.taskQueue),
    workflowType: METRICS_WORKFLOWS.sweep,
    taskQueue: opts.taskQueue,
    everyS: opts.sweepEveryS,
    purpose: 'Deletes metrics samples older than METRICS_RETENTION_H',
  });
  return { sample, sweep };
}

/**
 * The usage roll-up (workflows/usage/workflow.ts): closed hours into immutable usage records, well inside the metrics
 * retention, so the sweep never removes what an hour is made of before it is rolled up.
 */
export const ensureUsageRollupSchedule = (client: Client, opts: { taskQueue: string; everyS: number }) =>
  ensureIntervalSchedule(client, {
    scheduleId: usageRollupScheduleId(opts.taskQueue),
    workflowType: USAGE_ROLLUP_WORKFLOW,
    ...opts,
    purpose: 'Rolls closed hours of usage into immutable usage records before their samples are swept',
  });
