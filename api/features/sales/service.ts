import { randomBytes, randomUUID } from 'node:crypto';

import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';

import type { Config } from '../../../shared/config';
import {
  WEBHOOK_WORKFLOWS,
  type WebhookDeliveryInput,
  webhookOutboxScheduleId,
  webhookWorkflowId,
} from '../../../shared/contracts/webhook-delivery';
import { isDuplicateKey } from '../../../shared/db/mongo';
import { AppError } from '../../../shared/errors';
import { hashToken } from '../../../shared/identity/tokens';
import type { Logger } from '../../../shared/logger';
import { privateTargetReason } from '../../../shared/net-guard';
import { logFailure } from '../../../shared/request-context';
import { completeSale as completeSaleRecords, derivedId, eventPayload } from '../../../shared/sales/records';
import type { EventType, ProductRecord, SaleRecord, SalesStore, SubscriptionStatus } from '../../../shared/sales/store';

/** A replaced signing secret keeps signing the Standard Webhooks header this long (rotation overlap). */
const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;
/**
 * How long recording an event waits for Temporal to take its delivery workflow; past it the outbox sweep starts it
 * (shared/contracts/webhook-delivery.ts), so a Temporal outage slows no request down for longer.
 */
const START_WAIT_MS = 5000;
const NOT_FOUND = { sale: 'SALE_NOT_FOUND', subscription: 'SUBSCRIPTION_NOT_FOUND', event: 'EVENT_NOT_FOUND' } as const;
const notFound = (what: keyof typeof NOT_FOUND, id: string) =>
  new AppError(NOT_FOUND[what], `No ${what} ${id} in this organisation.`);

/** One entry of the entitlement lookup, exactly the interface's fields (docs/architecture.md, "The interface we keep"). */
export interface Entitlement {
  type: 'one_time' | 'subscription';
  productId: string;
  productName: string;
  status: string;
  saleId: string;
  purchasedAt: string;
  subscriptionId?: string;
  currentPeriodEnd?: string;
}

export { webhookWorkflowId } from '../../../shared/contracts/webhook-delivery';

export function createSalesService(deps: {
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
}) {
  const { store, temporal, config } = deps;

  async function checkTarget(url: URL) {
    if (!['http:', 'https:'].includes(url.protocol))
      throw new AppError('INVALID_REQUEST', 'The webhook URL must be http:// or https://.');
    const reason = await privateTargetReason(url, { allowPrivate: config.ALLOW_PRIVATE_WEBHOOK_TARGETS });
    if (reason) throw new AppError('INVALID_REQUEST', `The webhook URL is refused: ${reason}.`);
  }

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

  /** Records an event (the outbox row) under an ID derived from what caused it, then starts its delivery. */
  async function emit(orgId: string, type: EventType, id: string, build: (id: string, at: Date) => string) {
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
  }

  /**
   * Starts a one-attempt workflow and waits for its outcome at most SALES_ATTEMPT_WAIT_MS: with no worker polling,
   * the request answers `queued` and the attempt runs when a worker comes (Temporal holds it).
   */
  async function attemptNow(workflowId: string, args: { eventId: string; trigger: 'manual' | 'test' }) {
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
  }

  /** Everything a recorded sale implies (safe to run again), then the delivery of its event. */
  async function completeSale(sale: SaleRecord, product: ProductRecord) {
    const done = await completeSaleRecords(store, sale, product);
    await startDelivery(sale.orgId, done.eventId);
    return done;
  }

  async function saleContext(orgId: string, saleId: string) {
    const sale = await store.getSale(orgId, saleId);
    if (!sale) throw notFound('sale', saleId);
    const product = (await store.getProduct(orgId, sale.productId))!;
    const subscription = sale.subscriptionId ? await store.getSubscription(orgId, sale.subscriptionId) : null;
    return { sale, product, subscription };
  }

  return {
    /** Saves the endpoint and returns a new signing secret once; the old one overlaps for 24 h unless rotated at once. */
    async setWebhook(orgId: string, input: { url: string; rotateImmediately?: boolean }) {
      const hadEndpoint = Boolean((await store.getSeller(orgId))?.webhook);
      const url = new URL(input.url);
      await checkTarget(url);
      const now = new Date();
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      const previous = (await store.getSeller(orgId))?.webhook?.secrets ?? [];
      const kept = input.rotateImmediately
        ? []
        : previous
            .filter((s) => !s.retiresAt || s.retiresAt > now)
            .map((s) => ({ ...s, retiresAt: s.retiresAt ?? new Date(now.getTime() + ROTATION_OVERLAP_MS) }));
      await store.setWebhook(orgId, { url: url.toString(), secrets: [{ value: secret, createdAt: now }, ...kept] });
      // Events recorded while there was no endpoint are waiting: sweep now rather than at the next interval.
      if (!hadEndpoint) {
        await temporal
          .withDeadline(Date.now() + START_WAIT_MS, () =>
            temporal.schedule.getHandle(webhookOutboxScheduleId(config.TEMPORAL_TASK_QUEUE)).trigger(),
          )
          .catch(
            logFailure(deps.log, 'outbox sweep not triggered; the waiting events go at its next interval', { orgId }),
          );
      }
      return { url: url.toString(), secret };
    },

    async getWebhook(orgId: string) {
      const webhook = (await store.getSeller(orgId))?.webhook;
      if (!webhook) return { url: null, secret: null, previousSecretsValidUntil: [] };
      const [current, ...old] = webhook.secrets;
      const now = new Date();
      return {
        url: webhook.url,
        secret: `${current!.value.slice(0, 10)}…${current!.value.slice(-4)}`,
        previousSecretsValidUntil: old
          .filter((s) => s.retiresAt && s.retiresAt > now)
          .map((s) => s.retiresAt!.toISOString()),
      };
    },

    /** A new seller API key, shown once; the previous one stops working at once. */
    async createApiKey(orgId: string) {
      const apiKey = `sk_${randomBytes(32).toString('base64url')}`;
      await store.setApiKey(orgId, { hash: hashToken(apiKey), createdAt: new Date() });
      return { apiKey };
    },
    revokeApiKey: (orgId: string) => store.setApiKey(orgId, null),

    async createProduct(orgId: string, input: Omit<ProductRecord, '_id' | 'orgId' | 'createdAt'>) {
      if (input.billingType === 'SUBSCRIPTION' && !input.interval) {
        throw new AppError('INVALID_REQUEST', 'A SUBSCRIPTION product needs an interval: month or year.');
      }
      const product: ProductRecord = { _id: randomUUID(), orgId, ...input, createdAt: new Date() };
      await store.insertProduct(product);
      return product;
    },

    /**
     * Records a paid sale (and its subscription), then emits sale.completed. With an idempotency key the sale's ID is
     * derived from it: a retried request collides on the unique `_id`, finishes whatever the first left undone, and
     * answers DUPLICATE_REQUEST naming the first sale.
     */
    async recordSale(
      orgId: string,
      input: {
        productId: string;
        buyer: { email: string; name: string };
        quantity: number;
        amount: number;
        currency: string;
        salesCode?: string;
        /** The body's `requestId` (its name on the wire). */
        idempotencyKey?: string;
      },
    ) {
      const product = await store.getProduct(orgId, input.productId);
      if (!product)
        throw new AppError('INVALID_REQUEST', `Unknown productId ${input.productId}; create the product first.`);
      const id = input.idempotencyKey ? derivedId(`${orgId}:${input.idempotencyKey}`) : randomUUID();
      const sale: SaleRecord = {
        _id: id,
        orgId,
        productId: product._id,
        buyer: { email: input.buyer.email, emailLower: input.buyer.email.toLowerCase(), name: input.buyer.name },
        quantity: input.quantity,
        amount: input.amount,
        currency: input.currency.toUpperCase(),
        salesCode: input.salesCode ?? '',
        ...(product.billingType === 'SUBSCRIPTION' ? { subscriptionId: derivedId(`${id}:subscription`) } : {}),
        ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
        createdAt: new Date(),
      };
      try {
        await store.insertSale(sale);
      } catch (err) {
        if (!(input.idempotencyKey && isDuplicateKey(err))) throw err;
        const first = (await store.getSale(orgId, id))!;
        const done = await completeSale(first, (await store.getProduct(orgId, first.productId))!);
        // Named by its body field, the name the caller knows.
        throw new AppError(
          'DUPLICATE_REQUEST',
          `requestId "${input.idempotencyKey}" was already used: it recorded sale ${done.saleId} (event ${done.eventId}); no second sale was recorded.`,
          { requestId: input.idempotencyKey, ...done },
        );
      }
      return completeSale(sale, product);
    },

    /** A retried refund finds the sale refunded: its event (derived ID) is made sure of before saying so. */
    async refund(orgId: string, saleId: string) {
      const ctx = await saleContext(orgId, saleId);
      const refunded = await store.markRefunded(orgId, saleId, new Date());
      const eventId = await emit(orgId, 'sale.refunded', derivedId(`${saleId}:sale.refunded`), (id, at) =>
        eventPayload(id, 'sale.refunded', at, ctx.sale, ctx.product, ctx.subscription),
      );
      if (!refunded) throw new AppError('INVALID_REQUEST', `Sale ${saleId} was already refunded (event ${eventId}).`);
      return { saleId, eventId };
    },

    /** Changes a subscription; a status or renewal-date change emits subscription.updated. */
    async updateSubscription(
      orgId: string,
      id: string,
      input: { status?: SubscriptionStatus; currentPeriodEnd?: string },
    ) {
      const sub = await store.getSubscription(orgId, id);
      if (!sub) throw notFound('subscription', id);
      const set: { status?: SubscriptionStatus; currentPeriodEnd?: Date } = {};
      if (input.status && input.status !== sub.status) set.status = input.status;
      if (input.currentPeriodEnd && Date.parse(input.currentPeriodEnd) !== sub.currentPeriodEnd.getTime())
        set.currentPeriodEnd = new Date(input.currentPeriodEnd);
      if (Object.keys(set).length === 0) return { subscriptionId: id, eventId: null };
      await store.updateSubscription(orgId, id, set);
      const ctx = await saleContext(orgId, sub.saleId);
      const eventId = await emit(orgId, 'subscription.updated', randomUUID(), (eid, at) =>
        eventPayload(eid, 'subscription.updated', at, ctx.sale, ctx.product, ctx.subscription),
      );
      return { subscriptionId: id, eventId };
    },

    /** A `test` event with a sample sale, sent once now. */
    async sendTest(orgId: string) {
      if (!(await store.getSeller(orgId))?.webhook)
        throw new AppError('INVALID_REQUEST', 'Save a webhook URL first: PUT /platform/sales/webhook.');
      const id = randomUUID();
      const createdAt = new Date();
      const sample = {
        id,
        type: 'test',
        createdAt: createdAt.toISOString(),
        data: {
          saleId: randomUUID(),
          product: { id: 'test-product', name: 'Test product', billingType: 'ONE_TIME' },
          buyer: { email: 'buyer@example.com', name: 'Test Buyer' },
          quantity: 1,
          amount: 0,
          currency: 'USD',
          salesCode: 'TEST',
          subscription: null,
        },
      };
      await store.insertEvent({
        _id: id,
        orgId,
        type: 'test',
        body: JSON.stringify(sample),
        createdAt,
        status: 'pending',
        attempts: [],
      });
      const { outcome } = await attemptNow(`${webhookWorkflowId(id)}/test`, { eventId: id, trigger: 'test' });
      return { eventId: id, outcome };
    },

    /** One new attempt now, same event ID and body; answers with that attempt, or `queued` when no worker took it. */
    async resend(orgId: string, eventId: string) {
      const event = await store.getEvent(orgId, eventId);
      if (!event) throw notFound('event', eventId);
      const workflowId = `${webhookWorkflowId(eventId)}/manual-${event.attempts.length + 1}-${randomUUID().slice(0, 8)}`;
      const { outcome } = await attemptNow(workflowId, { eventId, trigger: 'manual' });
      if (outcome === 'queued') return { outcome, attempt: undefined };
      const after = (await store.getEvent(orgId, eventId))!;
      return { outcome, attempt: after.attempts.find((a) => a.key === workflowId) };
    },

    /** The deliveries log, newest first; `since` as the wire sends it (an ISO time). */
    listDeliveries: (
      orgId: string,
      q: Omit<Parameters<SalesStore['listEvents']>[0], 'orgId' | 'since'> & { since?: string | undefined },
    ) => store.listEvents({ ...q, orgId, since: q.since ? new Date(q.since) : undefined }),
    async getDelivery(orgId: string, eventId: string) {
      const event = await store.getEvent(orgId, eventId);
      if (!event) throw notFound('event', eventId);
      return event;
    },

    /** What the buyer holds now under this seller: unrefunded one-time purchases, active subscriptions. */
    async entitlements(orgId: string, email: string) {
      const sales = (await store.salesOfBuyer(orgId, email.toLowerCase())).filter((s) => !s.refundedAt);
      const products = new Map(
        (await store.productsByIds(orgId, [...new Set(sales.map((s) => s.productId))])).map((p) => [p._id, p]),
      );
      const subs = new Map(
        (
          await store.subscriptionsByIds(
            orgId,
            sales.flatMap((s) => (s.subscriptionId ? [s.subscriptionId] : [])),
          )
        ).map((s) => [s._id, s]),
      );
      return sales.flatMap((sale): Entitlement[] => {
        const product = products.get(sale.productId)!;
        const common = {
          productId: product._id,
          productName: product.name,
          saleId: sale._id,
          purchasedAt: sale.createdAt.toISOString(),
        };
        if (!sale.subscriptionId) return [{ type: 'one_time', ...common, status: 'active' }];
        const sub = subs.get(sale.subscriptionId);
        if (!sub || sub.status !== 'active') return [];
        return [
          {
            type: 'subscription',
            ...common,
            status: sub.status,
            subscriptionId: sub._id,
            currentPeriodEnd: sub.currentPeriodEnd.toISOString(),
          },
        ];
      });
    },
  };
}

export type SalesService = ReturnType<typeof createSalesService>;
