/**
 * The webhook workflows' contract: what the api and the worker's schedule need to start them (type names, IDs,
 * inputs), no workflow code (docs/architecture.md, "Layers and where code goes"). The names are the exported
 * functions' names in workflows/webhook-delivery/workflow.ts, which the worker registers.
 *
 * The sales outbox: every recorded event is delivered. The api starts an event's `webhook/<eventId>` workflow
 * when it records the event (best effort, bounded); a Temporal schedule sweeps the events still `pending` and
 * starts the workflows that never started, or that ended without an endpoint (idempotent by workflow ID).
 *
 * An event recorded while the seller has no webhook URL waits, `pending`, for one: saving an endpoint triggers a
 * sweep at once, and the event is then delivered on the normal retry schedule. It waits for at most the retry
 * window (WEBHOOK_FINAL_ATTEMPT_AFTER_S after it was recorded); an event never attempted within it is marked
 * `failed` (it can still be resent from the deliveries log).
 *
 * A sale is written before its event (FerretDB has no transactions); the sweep also gives every sale of the last
 * hour that lacks its sale.completed event that event (IDs derived from the sale, so never a second one).
 */
export const WEBHOOK_WORKFLOWS = {
  delivery: 'webhookDeliveryWorkflow',
  resend: 'webhookResendWorkflow',
  outbox: 'webhookOutboxWorkflow',
} as const;

/** One delivery per event; a resend's ID is this with a suffix, so it runs beside whatever schedule still runs. */
export const webhookWorkflowId = (eventId: string) => `webhook/${eventId}`;
export const webhookOutboxScheduleId = (taskQueue: string) => `webhook-outbox/${taskQueue}`;

export interface WebhookDeliveryInput {
  eventId: string;
  /** Delays between the first attempts, then one last attempt this long after the first (one config table). */
  retryDelaysS: number[];
  finalAttemptAfterS: number;
}

export interface WebhookResendInput {
  eventId: string;
  trigger: 'manual' | 'test';
}

export interface OutboxSweepInput {
  /** Handed to each delivery workflow the sweep starts (the same config table the api uses). */
  retryDelaysS: number[];
  finalAttemptAfterS: number;
}

export interface OutboxSweepReport {
  started: number;
  expired: number;
  repaired: number;
}
