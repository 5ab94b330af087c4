import { proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';

import type { WebhookActivities } from '../activities/webhooks';

// One HTTP attempt takes at most 8 s; the activity retries only when recording the attempt itself fails.
const { deliverAttempt } = proxyActivities<WebhookActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumAttempts: 5, maximumInterval: '10 seconds' },
});

export interface WebhookDeliveryInput {
  eventId: string;
  /** Delays between the first attempts, then one last attempt this long after the first (one config table). */
  retryDelaysS: number[];
  finalAttemptAfterS: number;
}

/**
 * Delivers one event to the seller's endpoint: at once, then after each retry delay, then once more a day
 * after the first attempt. A 2xx ends it delivered; 410 Gone ends the retries.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<string> {
  const first = Date.now();
  const plan = input.retryDelaysS.map((s) => s * 1000);
  const finalAt = first + input.finalAttemptAfterS * 1000;
  for (let i = 0; ; i++) {
    const delay = plan[i];
    const last = delay === undefined && Date.now() >= finalAt - 1;
    const nextAt = delay !== undefined ? Date.now() + delay : last ? null : finalAt;
    const result = await deliverAttempt({
      eventId: input.eventId,
      trigger: 'auto',
      nextAttemptAt: nextAt === null ? null : new Date(nextAt).toISOString(),
      final: nextAt === null,
      scheduledAt: new Date(Date.now()).toISOString(),
      key: `auto-${i + 1}`,
    });
    if (result.outcome !== 'failed') return result.outcome;
    if (nextAt === null) return 'failed';
    await sleep(nextAt - Date.now());
  }
}

/** One manual attempt now (resend from the deliveries log), beside whatever schedule is still running. */
export async function webhookResendWorkflow(input: { eventId: string; trigger: 'manual' | 'test' }): Promise<string> {
  const result = await deliverAttempt({
    eventId: input.eventId,
    trigger: input.trigger,
    nextAttemptAt: null,
    final: false,
    scheduledAt: new Date(Date.now()).toISOString(),
    key: workflowInfo().workflowId,
  });
  return result.outcome;
}
