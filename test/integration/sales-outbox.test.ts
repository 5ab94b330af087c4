import { randomUUID } from 'node:crypto';

import type { ScheduleHandle } from '@temporalio/client';

import { ensureWebhookOutboxSchedule } from '@worker/schedules';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { startReceiver } from '../helpers/receiver';

type Data<T> = { status: string; data: T };
type Api = ReturnType<typeof client>;

// Its own database: the sweep reads every pending event, and other files' events are not this file's business.
const OVERRIDES = {
  MONGODB_DB: 'slipway_outbox_test',
  ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
  WEBHOOK_RETRY_DELAYS_S: '1,1,1',
  WEBHOOK_FINAL_ATTEMPT_AFTER_S: '600',
  RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
};

/**
 * The outbox (shared/contracts/webhook-delivery.ts) on the real stack: the worker's sweep schedule, an api whose Temporal is
 * unreachable, an api with no worker behind its task queue, and retried sale requests.
 */
describe('sales outbox: every recorded event is delivered, once per sale', () => {
  let h: Harness;
  let sweep: ScheduleHandle;
  beforeAll(async () => {
    h = await startHarness('outbox', OVERRIDES);
    // As worker/main.ts creates it; a short interval keeps the test short (it also runs when a webhook is saved).
    sweep = await ensureWebhookOutboxSchedule(h.temporal, {
      taskQueue: h.taskQueue,
      everyS: 2,
      sweep: {
        retryDelaysS: h.config.WEBHOOK_RETRY_DELAYS_S,
        finalAttemptAfterS: h.config.WEBHOOK_FINAL_ATTEMPT_AFTER_S,
      },
    });
  });
  afterAll(async () => {
    await sweep?.delete().catch(() => undefined);
    await h?.stop();
  });

  async function seller(api: Api, url?: string) {
    if (url) expect((await api.call('PUT', '/platform/sales/webhook', { url })).status).toBe(200);
    const product = await api.post<Data<{ id: string }>>('/platform/products', {
      name: 'Course',
      billingType: 'ONE_TIME',
      price: 49,
      currency: 'USD',
    });
    return product.body.data.id;
  }
  const sale = (productId: string, extra: Record<string, unknown> = {}) => ({
    productId,
    buyer: { email: 'buyer@example.com', name: 'Buyer' },
    amount: 49,
    currency: 'USD',
    ...extra,
  });
  const delivery = async (api: Api, eventId: string) =>
    (await api.get<Data<{ status: string; attempts: { trigger: string }[] }>>(`/platform/sales/deliveries/${eventId}`))
      .body.data;
  const deliveredTo = (receiver: { received: unknown[] }, n: number, what: string) =>
    eventually(async () => (receiver.received.length >= n ? true : undefined), what);

  it('delivers a sale whose delivery workflow could not be started when it was recorded', async () => {
    const receiver = await startReceiver();
    try {
      const { token } = await h.newOrg();
      const api = client(h, token);
      const productId = await seller(api, receiver.url);
      // A second api whose Temporal connection is gone: the sale is recorded, its workflow start fails.
      const warnings: Record<string, unknown>[] = [];
      const logDestination = {
        write: (line: string) => void warnings.push(JSON.parse(line) as Record<string, unknown>),
      };
      const cutOff = await startHarness(
        'outbox',
        { ...OVERRIDES, LOG_LEVEL: 'warn' },
        { worker: false, logDestination },
      );
      await cutOff.temporal.connection.close();
      const cut = client(cutOff, token);
      const recorded = await cut.post<Data<{ saleId: string; eventId: string }>>('/platform/sales', sale(productId));
      expect(recorded.status).toBe(200);
      await cutOff.stop().catch(() => undefined);
      // The start that failed is in the api's log under the request that recorded the sale, not absorbed unseen.
      expect(warnings).toContainEqual(
        expect.objectContaining({
          msg: 'webhook delivery not started; the outbox sweep delivers the event',
          requestId: recorded.headers.get('x-request-id'),
          eventId: recorded.body.data.eventId,
        }),
      );

      await deliveredTo(receiver, 1, 'the sweep to deliver the event');
      expect(receiver.received[0]!.headers['x-sales-event-id']).toBe(recorded.body.data.eventId);
      // The delivery that ran is the one the sweep started, not a late start from the api.
      const run = await h.temporal.workflow.getHandle(`webhook/${recorded.body.data.eventId}`).describe();
      expect(run.parentExecution?.workflowId).toMatch(/^webhook-outbox\//);
      await eventually(
        async () => ((await delivery(api, recorded.body.data.eventId)).status === 'delivered' ? true : undefined),
        'the event to be marked delivered',
      );
    } finally {
      await receiver.stop();
    }
  });

  it('keeps events recorded before any endpoint pending, and delivers them once one is saved', async () => {
    const receiver = await startReceiver();
    try {
      const api = client(h, (await h.newOrg()).token);
      const productId = await seller(api);
      const first = await api.post<Data<{ eventId: string }>>('/platform/sales', sale(productId));
      const second = await api.post<Data<{ eventId: string }>>('/platform/sales', sale(productId));
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(await delivery(api, first.body.data.eventId)).toMatchObject({ status: 'pending', attempts: [] });

      expect((await api.call('PUT', '/platform/sales/webhook', { url: receiver.url })).status).toBe(200);
      await deliveredTo(receiver, 2, 'both waiting events to be delivered');
      expect(new Set(receiver.received.map((r) => r.headers['x-sales-event-id']))).toEqual(
        new Set([first.body.data.eventId, second.body.data.eventId]),
      );
    } finally {
      await receiver.stop();
    }
  });

  it('gives a sale whose request died before recording its event that event, and delivers it', async () => {
    const receiver = await startReceiver();
    try {
      const { token, orgId } = await h.newOrg();
      const api = client(h, token);
      const productId = await seller(api, receiver.url);
      // What an api that died between its two writes leaves: the sale, and no event.
      const saleId = randomUUID();
      await h.db.collection('sales').insertOne({
        _id: saleId as never,
        orgId,
        productId,
        buyer: { email: 'crash@example.com', emailLower: 'crash@example.com', name: 'Buyer' },
        quantity: 1,
        amount: 49,
        currency: 'USD',
        salesCode: '',
        createdAt: new Date(Date.now() - 120_000),
      });
      await deliveredTo(receiver, 1, 'the repaired sale event');
      const body = JSON.parse(receiver.received[0]!.raw.toString()) as { type: string; data: { saleId: string } };
      expect(body).toMatchObject({ type: 'sale.completed', data: { saleId } });
      expect(await h.db.collection('events').countDocuments({ orgId })).toBe(1);
    } finally {
      await receiver.stop();
    }
  });

  it('gives up on an event never attempted within the retry window, marking it failed', async () => {
    const api = client(h, (await h.newOrg()).token);
    const productId = await seller(api);
    const recorded = await api.post<Data<{ eventId: string }>>('/platform/sales', sale(productId));
    // As if recorded before the window (WEBHOOK_FINAL_ATTEMPT_AFTER_S=600) and never sent: no endpoint all along.
    await h.db
      .collection('events')
      .updateOne(
        { _id: recorded.body.data.eventId as never },
        { $set: { createdAt: new Date(Date.now() - 3600_000) } },
      );
    await eventually(
      async () => ((await delivery(api, recorded.body.data.eventId)).status === 'failed' ? true : undefined),
      'the sweep to mark the expired event failed',
    );
    expect(await delivery(api, recorded.body.data.eventId)).toMatchObject({ status: 'failed', attempts: [] });
  });

  it('records one sale per requestId, answering a retry DUPLICATE_REQUEST with the first sale', async () => {
    const receiver = await startReceiver();
    try {
      const api = client(h, (await h.newOrg()).token);
      const productId = await seller(api, receiver.url);
      const first = await api.post<Data<{ saleId: string; eventId: string }>>(
        '/platform/sales',
        sale(productId, { requestId: 'order-1' }),
      );
      expect(first.status).toBe(200);
      const retry = await api.post<{ status: string; message: string }>(
        '/platform/sales',
        sale(productId, { requestId: 'order-1' }),
      );
      expect(retry.status).toBe(409);
      expect(retry.body.message).toContain(first.body.data.saleId);

      // Ten retries racing each other: one sale, the other nine told which.
      const burst = await Promise.all(
        Array.from({ length: 10 }, () =>
          api.post<Data<{ saleId: string }> & { message?: string }>(
            '/platform/sales',
            sale(productId, { requestId: 'order-2' }),
          ),
        ),
      );
      const won = burst.filter((r) => r.status === 200);
      expect(won).toHaveLength(1);
      expect(burst.filter((r) => r.status === 409)).toHaveLength(9);
      for (const r of burst.filter((b) => b.status === 409)) expect(r.body.message).toContain(won[0]!.body.data.saleId);

      const stored = (await h.db.collection('sales').findOne({ _id: first.body.data.saleId as never }))!;
      // Kept as the idempotency key: requestId names only a request's X-Request-Id inside the api.
      expect(stored).toMatchObject({ idempotencyKey: 'order-1' });
      expect(stored).not.toHaveProperty('requestId');
      const orgId = stored.orgId as string;
      expect(await h.db.collection('sales').countDocuments({ orgId })).toBe(2);
      expect(await h.db.collection('events').countDocuments({ orgId })).toBe(2);
      await deliveredTo(receiver, 2, 'one delivery per sale');
      expect(new Set(receiver.received.map((r) => r.headers['x-sales-event-id'])).size).toBe(2);

      // The key is the organisation's own: another seller using the same one records its own sale.
      const other = client(h, (await h.newOrg()).token);
      const otherSale = await other.post<Data<{ saleId: string }>>(
        '/platform/sales',
        sale(await seller(other), { requestId: 'order-1' }),
      );
      expect(otherSale.status).toBe(200);
      expect(otherSale.body.data.saleId).not.toBe(first.body.data.saleId);
    } finally {
      await receiver.stop();
    }
  });

  it('answers resend and test with 202 when no worker runs, and sends both once a worker comes', async () => {
    const receiver = await startReceiver();
    // An api on a task queue nobody polls yet, waiting at most a second for an attempt.
    const idle = await startHarness('outbox-idle', { ...OVERRIDES, SALES_ATTEMPT_WAIT_MS: '1000' }, { worker: false });
    let worker: Harness | undefined;
    try {
      const { token } = await idle.newOrg();
      const api = client(idle, token);
      const productId = await seller(api, receiver.url);
      const recorded = await api.post<Data<{ eventId: string }>>('/platform/sales', sale(productId));
      expect(recorded.status).toBe(200);
      const eventId = recorded.body.data.eventId;

      // Bounded on our side too: on a server that waits for the attempt, this fails instead of hanging the test.
      const bounded = (path: string) =>
        fetch(`${idle.baseUrl}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}` },
          signal: AbortSignal.timeout(30_000),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as Data<Record<string, unknown>> }));
      const resend = await bounded(`/platform/sales/deliveries/${eventId}/resend`);
      expect(resend.status).toBe(202);
      expect(resend.body.data).toMatchObject({ outcome: 'queued', attempt: null, message: expect.any(String) });
      const test = await bounded('/platform/sales/webhook/test');
      expect(test.status).toBe(202);
      expect(test.body.data).toMatchObject({ outcome: 'queued' });
      expect(receiver.received).toHaveLength(0);

      worker = await startHarness('outbox-idle', OVERRIDES);
      await deliveredTo(receiver, 3, 'the sale event, its resend and the test event');
      const types = receiver.received.map((r) => r.headers['x-sales-event-type']).sort();
      expect(types).toEqual(['sale.completed', 'sale.completed', 'test']);
      const log = await eventually(async () => {
        const d = await delivery(api, eventId);
        return d.attempts.length === 2 ? d : undefined;
      }, 'both attempts of the sale event in the log');
      expect(log.attempts.map((a) => a.trigger).sort()).toEqual(['auto', 'manual']);
    } finally {
      await worker?.stop();
      await idle.stop();
      await receiver.stop();
    }
  });
});
