import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ParentClosePolicy,
  patched,
  proxyActivities,
  proxyLocalActivities,
  sleep,
  startChild,
  WorkflowIdReusePolicy,
  workflowInfo,
} from '@temporalio/workflow';

import type { WebhookDeliveryActivities } from '@activities/webhook-delivery';
import type { AttemptInput, AttemptResult } from '@activities/webhook-delivery/attempts';
import {
  type OutboxSweepInput,
  type OutboxSweepReport,
  type WebhookDeliveryInput,
  type WebhookResendInput,
  webhookWorkflowId,
} from '@shared/contracts/webhook-delivery';

import { WEBHOOK_PATCHES } from './patches';

// No maximumAttempts: an activity fails only when MongoDB cannot be read or written (HTTP failures are results),
// and a delivery must outlive an outage of any length rather than give up on the event.
const untilTheDatabaseAnswers = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' };
const { sendAttempt, recordAttempt } = proxyActivities<WebhookDeliveryActivities>({
  // One HTTP attempt takes at most 8 s; the rest is reading the event (MongoDB's server selection gives up in 5 s).
  startToCloseTimeout: '1 minute',
  retry: untilTheDatabaseAnswers,
});
// The same bounds for the attempt run inside the workflow task: one HTTP attempt and two MongoDB round trips, far
// below the minute, so the worker extends its workflow task only for a slow receiver or a database outage.
const { deliverAttempt } = proxyLocalActivities<WebhookDeliveryActivities>({
  startToCloseTimeout: '1 minute',
  retry: untilTheDatabaseAnswers,
});
const { readOutbox } = proxyActivities<WebhookDeliveryActivities>({
  startToCloseTimeout: '2 minutes',
  retry: untilTheDatabaseAnswers,
});

/**
 * Send, then record: an outcome the attempt could not record is held by the workflow and recorded by an activity
 * retried until MongoDB answers, so a lost write never re-sends. Run as a local activity, a delivered event costs
 * the workflow one task: no activity is scheduled, polled, started and completed through Temporal for it.
 */
async function attempt(input: AttemptInput): Promise<AttemptResult> {
  const sent = patched(WEBHOOK_PATCHES.localAttempt) ? await deliverAttempt(input) : await sendAttempt(input);
  if (sent.kind === 'done') return sent.result;
  const { kind: _kind, ...toRecord } = sent;
  return recordAttempt(toRecord);
}

/**
 * Delivers one event to the seller's endpoint: at once, then after each retry delay, then once more a day
 * after the first attempt. A 2xx ends it delivered; 410 Gone ends the retries. Without an endpoint it ends
 * `no_endpoint` and the event stays pending for the outbox sweep.
 */
export async function webhookDeliveryWorkflow(input: WebhookDeliveryInput): Promise<string> {
  const first = Date.now();
  const plan = input.retryDelaysS.map((s) => s * 1000);
  const finalAt = first + input.finalAttemptAfterS * 1000;
  for (let i = 0; ; i++) {
    const delay = plan[i];
    const last = delay === undefined && Date.now() >= finalAt - 1;
    const nextAt = delay !== undefined ? Date.now() + delay : last ? null : finalAt;
    const result = await attempt({
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
export async function webhookResendWorkflow(input: WebhookResendInput): Promise<string> {
  const result = await attempt({
    eventId: input.eventId,
    trigger: input.trigger,
    nextAttemptAt: null,
    final: false,
    scheduledAt: new Date(Date.now()).toISOString(),
    key: workflowInfo().workflowId,
  });
  return result.outcome;
}

/**
 * Run by the webhook-outbox schedule: (re)starts the delivery workflow of every pending event whose seller has an
 * endpoint. One already running answers "already started" and is left alone; one that ended without an endpoint
 * starts again (its recorded attempts are found by key, never sent twice).
 */
export async function webhookOutboxWorkflow(input: OutboxSweepInput): Promise<OutboxSweepReport> {
  let started = 0;
  let expired = 0;
  let repaired = 0;
  let after = null;
  do {
    const page: Awaited<ReturnType<typeof readOutbox>> = await readOutbox({ windowS: input.finalAttemptAfterS, after });
    expired += page.expired;
    repaired += page.repaired;
    const starts = page.toStart.map(async (eventId) => {
      try {
        await startChild(webhookDeliveryWorkflow, {
          workflowId: webhookWorkflowId(eventId),
          args: [{ eventId, retryDelaysS: input.retryDelaysS, finalAttemptAfterS: input.finalAttemptAfterS }],
          parentClosePolicy: ParentClosePolicy.ABANDON,
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        });
        started++;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    });
    await Promise.all(starts);
    after = page.next;
  } while (after);
  return { started, expired, repaired };
}
