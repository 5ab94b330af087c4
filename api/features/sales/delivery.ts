import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';

import type { Config } from '@shared/config';
import {
  WEBHOOK_WORKFLOWS,
  type WebhookDeliveryInput,
  webhookOutboxScheduleId,
  webhookWorkflowId,
} from '@shared/contracts/webhook-delivery';
import { AppError } from '@shared/errors';
import type { Logger } from '@shared/logger';
import { logFailure } from '@shared/request-context';
import type { EventType, SalesStore } from '@shared/sales/store';

/** What every part of the sales service is made of. */
export interface SalesDeps {
  store: SalesStore;
  temporal: Client;
  config: Pick<
    Config,
    | 'TEMPORAL_TASK_QUEUE'
    | 'WEBHOOK_RETRY_DELAYS_S'
    | 'WEBHOOK_FINAL_ATTEMPT_AFTER_S'
    | 'ALLOW_PRIVATE_WEBHOOK_TARGETS'
    | 'SALES_ATTEMPT_WAIT_MS'
  >;
  log: Pick<Logger, 'warn'>;
}

/**
 * How long recording an event waits for Temporal to take its delivery workflow; past it the outbox sweep starts it
 * (shared/contracts/webhook-delivery.ts), so a Temporal outage slows no request down for longer.
 */
const START_WAIT_MS = 5000;

const NOT_FOUND = { sale: 'SALE_NOT_FOUND', subscription: 'SUBSCRIPTION_NOT_FOUND', event: 'EVENT_NOT_FOUND' } as const;
export const notFound = (what: keyof typeof NOT_FOUND, id: string) =>
  new AppError(NOT_FOUND[what], `No ${what} ${id} in this organisation.`);

/**
 * The events' way out: recording one (the outbox row) and asking Temporal to deliver it, a single attempt now, and a
 * sweep of the outbox now. The outbox is the source of truth; every Temporal call here is bounded and best effort.
 */
export function createEventDelivery(deps: SalesDeps) {
  const { store, temporal, config } = deps;

  /**
   * Asks Temporal for an event's delivery. Best effort and bounded: the event is recorded, so the outbox sweep
   * delivers it whatever happens here (no endpoint yet, Temporal unreachable, the api dying now).
   */
  async function startDelivery(orgId: string, id: string) {
    if (!(await store.getSeller(orgId))?.webhook) return;
    const input: WebhookDeliveryInput = {
      eventId: id,
      retryDelaysS: config.WEBHOOK_RETRY_DELAYS_S,
      finalAttemptAfterS: config.WEBHOOK_FINAL_ATTEMPT_AFTER_S,
    };
    try {
      await temporal.withDeadline(Date.now() + START_WAIT_MS, () =>
        temporal.workflow.start(WEBHOOK_WORKFLOWS.delivery, {
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          workflowId: webhookWorkflowId(id),
          // A finished delivery is never run again from here (a retried request); only the outbox restarts one.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          args: [input],
        }),
      );
    } catch (err) {
      // Already started: a retried request, whose first start stands.
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      logFailure(deps.log, 'webhook delivery not started; the outbox sweep delivers the event', { eventId: id })(err);
    }
  }

  return {
    startDelivery,

    /** Records an event (the outbox row) under an ID derived from what caused it, then starts its delivery. */
    async emit(orgId: string, type: EventType, id: string, build: (id: string, at: Date) => string) {
      const createdAt = new Date();
      await store.ensureEvent({
        _id: id,
        orgId,
        type,
        body: build(id, createdAt),
        createdAt,
        status: 'pending',
        attempts: [],
      });
      await startDelivery(orgId, id);
      return id;
    },

    /**
     * Starts a one-attempt workflow and waits for its outcome at most SALES_ATTEMPT_WAIT_MS: with no worker polling,
     * the request answers `queued` and the attempt runs when a worker comes (Temporal holds it).
     */
    async attemptNow(workflowId: string, args: { eventId: string; trigger: 'manual' | 'test' }) {
      const signal = AbortSignal.timeout(config.SALES_ATTEMPT_WAIT_MS);
      let handle;
      try {
        handle = await temporal.withAbortSignal(signal, () =>
          temporal.workflow.start(WEBHOOK_WORKFLOWS.resend, {
            taskQueue: config.TEMPORAL_TASK_QUEUE,
            workflowId,
            args: [args],
          }),
        );
      } catch (err) {
        if (err instanceof WorkflowExecutionAlreadyStartedError) return { outcome: 'queued' as const };
        throw new AppError(
          'INTERNAL_ERROR',
          'The attempt could not be queued (the workflow service did not answer); retry in a minute.',
        );
      }
      try {
        return { outcome: (await temporal.withAbortSignal(signal, () => handle.result())) as string };
      } catch (err) {
        if (signal.aborted) return { outcome: 'queued' as const };
        throw err;
      }
    },

    /** Sweeps the outbox now rather than at its next interval; a Temporal that does not answer leaves it to that. */
    async sweepNow(orgId: string) {
      await temporal
        .withDeadline(Date.now() + START_WAIT_MS, () =>
          temporal.schedule.getHandle(webhookOutboxScheduleId(config.TEMPORAL_TASK_QUEUE)).trigger(),
        )
        .catch(
          logFailure(deps.log, 'outbox sweep not triggered; the waiting events go at its next interval', { orgId }),
        );
    },
  };
}

export type EventDelivery = ReturnType<typeof createEventDelivery>;
