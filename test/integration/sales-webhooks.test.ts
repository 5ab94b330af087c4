import http from 'node:http';

import { createSalesReceiver } from '@examples/sales-receiver/receiver';
import { signSalesBody, verifySalesSignature, verifyStandardWebhook } from '@shared/sales/signature';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { startReceiver } from '../helpers/receiver';

type Data<T> = { status: string; data: T };

describe('sales webhooks delivered by Temporal workflows (real HTTP receivers on loopback)', () => {
  let h: Harness;
  beforeAll(async () => {
    // A compressed schedule (1 s, 1 s, 1 s, last attempt 10 s after the first) keeps real timers short; the last
    // attempt is far enough out that four slow attempts on a loaded machine still come before it.
    h = await startHarness('sales', {
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      WEBHOOK_RETRY_DELAYS_S: '1,1,1',
      WEBHOOK_FINAL_ATTEMPT_AFTER_S: '10',
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
    });
  });
  afterAll(() => h?.stop());

  async function seller(url: string) {
    const api = client(h, (await h.newOrg()).token);
    const hook = await api.call<Data<{ url: string; secret: string }>>('PUT', '/platform/sales/webhook', { url });
    expect(hook.status).toBe(200);
    const product = await api.post<Data<{ id: string }>>('/platform/products', {
      name: 'Course',
      billingType: 'ONE_TIME',
      price: 49,
      currency: 'USD',
    });
    return { api, secret: hook.body.data.secret, productId: product.body.data.id };
  }

  interface Attempt {
    number: number;
    trigger: string;
    responseStatus: number | null;
    errorClass: string | null;
    durationMs: number;
    nextAttemptAt: string | null;
  }

  /** Polls the deliveries log until the event reaches `status`. */
  const deliveryWhen = (api: ReturnType<typeof client>, eventId: string, status: string, timeoutMs = 60_000) =>
    eventually(
      async () => {
        const d = await api.get<Data<{ status: string; attempts: Attempt[] }>>(`/platform/sales/deliveries/${eventId}`);
        return d.body.data.status === status ? d.body.data : undefined;
      },
      `event ${eventId} to be ${status}`,
      timeoutMs,
    );

  /** Records a one-time sale and returns its event ID. */
  const sell = async (api: ReturnType<typeof client>, productId: string, email: string) =>
    (
      await api.post<Data<{ eventId: string }>>('/platform/sales', {
        productId,
        buyer: { email, name: 'Buyer' },
        amount: 1,
        currency: 'EUR',
      })
    ).body.data.eventId;

  it('delivers the exact payload with signatures that verify, and logs the attempt', async () => {
    const receiver = await startReceiver();
    try {
      const { api, secret, productId } = await seller(receiver.url);
      expect(secret).toMatch(/^whsec_/);
      const sale = await api.post<Data<{ saleId: string; eventId: string }>>('/platform/sales', {
        productId,
        buyer: { email: 'Ada@Example.com', name: 'Ada' },
        amount: 49,
        currency: 'usd',
        salesCode: 'LAUNCH',
      });
      expect(sale.status).toBe(200);
      const { eventId, saleId } = sale.body.data;
      await eventually(async () => (receiver.received.length ? true : undefined), 'the delivery');
      const got = receiver.received[0]!;
      expect(got.headers['x-sales-event-id']).toBe(eventId);
      expect(got.headers['x-sales-event-type']).toBe('sale.completed');
      expect(verifySalesSignature(got.raw, got.headers['x-sales-signature'], secret)).toBe(true);
      expect(
        verifyStandardWebhook(
          {
            id: got.headers['webhook-id']!,
            timestamp: got.headers['webhook-timestamp']!,
            signature: got.headers['webhook-signature']!,
          },
          got.raw,
          secret,
        ),
      ).toBe(true);
      expect(JSON.parse(got.raw.toString())).toEqual({
        id: eventId,
        type: 'sale.completed',
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: {
          saleId,
          product: { id: productId, name: 'Course', billingType: 'ONE_TIME' },
          buyer: { email: 'Ada@Example.com', name: 'Ada' },
          quantity: 1,
          amount: 49,
          currency: 'USD',
          salesCode: 'LAUNCH',
          subscription: null,
        },
      });

      const delivery = await deliveryWhen(api, eventId, 'delivered');
      expect(delivery.attempts).toEqual([
        expect.objectContaining({ number: 1, trigger: 'auto', responseStatus: 200, errorClass: null }),
      ]);
      const list = await api.get<Data<{ deliveries: { eventId: string }[]; total: number }>>(
        '/platform/sales/deliveries?status=delivered&type=sale.completed',
      );
      expect(list.body.data.deliveries.map((d) => d.eventId)).toEqual([eventId]);
      const since = async (at: string) =>
        (
          await api.get<Data<{ deliveries: { eventId: string }[] }>>(
            `/platform/sales/deliveries?since=${encodeURIComponent(at)}`,
          )
        ).body.data.deliveries.map((d) => d.eventId);
      expect(await since('2000-01-01T00:00:00+02:00')).toEqual([eventId]);
      expect(await since(new Date(Date.now() + 3_600_000).toISOString())).toEqual([]);
    } finally {
      await receiver.stop();
    }
  });

  it('delivers a burst of sales once each, and the deliveries log lists every one delivered at its first attempt', async () => {
    const receiver = await startReceiver();
    try {
      const { api, productId } = await seller(receiver.url);
      const N = 30;
      const eventIds = await Promise.all(Array.from({ length: N }, (_, i) => sell(api, productId, `burst${i}@x.io`)));
      expect(new Set(eventIds).size).toBe(N);
      type Listed = { eventId: string; status: string; attemptCount: number };
      const listed = await eventually(
        async () => {
          const r = await api.get<Data<{ deliveries: Listed[]; total: number }>>(
            '/platform/sales/deliveries?status=delivered&limit=100',
          );
          return r.body.data.total === N ? r.body.data.deliveries : undefined;
        },
        `all ${N} events delivered`,
        120_000,
      );
      expect(listed.map((d) => d.eventId).sort()).toEqual([...eventIds].sort());
      expect(listed.filter((d) => d.attemptCount !== 1)).toEqual([]);
      expect(receiver.received.map((r) => r.headers['x-sales-event-id']).sort()).toEqual([...eventIds].sort());
      const pending = await api.get<Data<{ total: number }>>('/platform/sales/deliveries?status=pending');
      expect(pending.body.data.total).toBe(0);
      for (const eventId of eventIds.slice(0, 5)) {
        const d = await api.get<Data<{ attempts: Attempt[] }>>(`/platform/sales/deliveries/${eventId}`);
        expect(d.body.data.attempts).toEqual([
          expect.objectContaining({ number: 1, trigger: 'auto', errorClass: null }),
        ]);
      }
    } finally {
      await receiver.stop();
    }
  });

  it('runs a first attempt that succeeds inside the workflow task: no activity goes through the task queue', async () => {
    const receiver = await startReceiver();
    try {
      const { api, productId } = await seller(receiver.url);
      const eventId = await sell(api, productId, 'local@x.io');
      const handle = h.temporal.workflow.getHandle(`webhook/${eventId}`);
      expect(await handle.result()).toBe('delivered');
      const { events } = await handle.fetchHistory();
      expect(events!.filter((e) => e.activityTaskScheduledEventAttributes)).toEqual([]);
      // The attempt's outcome is a local activity's marker; the patch that chose it has one too.
      expect(events!.filter((e) => e.markerRecordedEventAttributes).length).toBeGreaterThanOrEqual(1);
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.stop();
    }
  });

  it('retries a failing receiver on the schedule, recording each attempt, then marks it failed; the same bytes every time', async () => {
    const receiver = await startReceiver(() => ({ status: 503 }));
    try {
      const { api, productId } = await seller(receiver.url);
      const eventId = await sell(api, productId, 'b@x.io');
      const done = await deliveryWhen(api, eventId, 'failed', 30_000);
      expect(done.attempts.map((a) => a.number)).toEqual([1, 2, 3, 4, 5]);
      expect(done.attempts.every((a) => a.errorClass === 'http_5xx')).toBe(true);
      expect(done.attempts.at(-1)!.nextAttemptAt).toBeNull();
      expect(done.attempts[0]!.nextAttemptAt).not.toBeNull();
      expect(receiver.received).toHaveLength(5);
      expect(new Set(receiver.received.map((r) => r.raw.toString())).size).toBe(1);
      const gaps = receiver.received.slice(1).map((r, i) => r.at - receiver.received[i]!.at);
      expect(gaps.slice(0, 3).every((g) => g >= 900)).toBe(true);
      expect(receiver.received[4]!.at - receiver.received[0]!.at).toBeGreaterThanOrEqual(9900);
    } finally {
      await receiver.stop();
    }
  });

  it('stops retrying on 410 Gone', async () => {
    const receiver = await startReceiver(() => ({ status: 410 }));
    try {
      const { api, productId } = await seller(receiver.url);
      const eventId = await sell(api, productId, 'c@x.io');
      const d = await deliveryWhen(api, eventId, 'failed');
      await new Promise((r) => setTimeout(r, 2500));
      expect(receiver.received).toHaveLength(1);
      expect(d.attempts).toHaveLength(1);
    } finally {
      await receiver.stop();
    }
  });

  it('counts a receiver slower than 8 s as a failed attempt (timeout)', async () => {
    const receiver = await startReceiver((n) => (n === 1 ? { status: 200, delayMs: 9000 } : { status: 200 }));
    try {
      const { api, productId } = await seller(receiver.url);
      const eventId = await sell(api, productId, 'd@x.io');
      const d = await deliveryWhen(api, eventId, 'delivered', 30_000);
      expect(d.attempts[0]).toMatchObject({ errorClass: 'timeout' });
      expect(d.attempts[0]!.durationMs).toBeGreaterThanOrEqual(7900);
      expect(d.attempts[1]).toMatchObject({ errorClass: null });
    } finally {
      await receiver.stop();
    }
  });

  it('resends on demand and sends test events, both logged with their trigger', async () => {
    const receiver = await startReceiver();
    try {
      const { api, productId } = await seller(receiver.url);
      const eventId = await sell(api, productId, 'e@x.io');
      await eventually(async () => (receiver.received.length === 1 ? true : undefined), 'the first delivery');
      const resent = await api.post<Data<{ outcome: string; attempt: { number: number; trigger: string } }>>(
        `/platform/sales/deliveries/${eventId}/resend`,
      );
      expect(resent.body.data).toMatchObject({ outcome: 'delivered', attempt: { number: 2, trigger: 'manual' } });
      expect(receiver.received[1]!.raw.equals(receiver.received[0]!.raw)).toBe(true);
      expect(receiver.received[1]!.headers['x-sales-event-id']).toBe(eventId);

      const test = await api.post<Data<{ eventId: string; outcome: string }>>('/platform/sales/webhook/test');
      expect(test.body.data.outcome).toBe('delivered');
      expect(receiver.received[2]!.headers['x-sales-event-type']).toBe('test');
      // A test event is shaped as every real one: the same fields, in the same order, at every level.
      const shape = (raw: Buffer) => {
        const e = JSON.parse(raw.toString()) as { data: { product: object; buyer: object } };
        return [e, e.data, e.data.product, e.data.buyer].map((o) => Object.keys(o));
      };
      expect(shape(receiver.received[2]!.raw)).toEqual(shape(receiver.received[0]!.raw));
      const log = await api.get<Data<{ attempts: { trigger: string }[] }>>(
        `/platform/sales/deliveries/${test.body.data.eventId}`,
      );
      expect(log.body.data.attempts.map((a) => a.trigger)).toEqual(['test']);
    } finally {
      await receiver.stop();
    }
  });

  it('signs with both secrets during a rotation overlap, and with only the new one after rotateImmediately', async () => {
    const receiver = await startReceiver();
    try {
      const { api, secret: oldSecret } = await seller(receiver.url);
      const rotated = await api.call<Data<{ secret: string }>>('PUT', '/platform/sales/webhook', { url: receiver.url });
      const newSecret = rotated.body.data.secret;
      expect(newSecret).not.toBe(oldSecret);
      expect(
        (await api.get<Data<{ previousSecretsValidUntil: string[] }>>('/platform/sales/webhook')).body.data
          .previousSecretsValidUntil,
      ).toHaveLength(1);
      await api.post('/platform/sales/webhook/test');
      const got = receiver.received.at(-1)!;
      expect(got.headers['webhook-signature']!.split(' ')).toHaveLength(2);
      const std = {
        id: got.headers['webhook-id']!,
        timestamp: got.headers['webhook-timestamp']!,
        signature: got.headers['webhook-signature']!,
      };
      expect(verifyStandardWebhook(std, got.raw, oldSecret)).toBe(true);
      expect(verifyStandardWebhook(std, got.raw, newSecret)).toBe(true);
      expect(verifySalesSignature(got.raw, got.headers['x-sales-signature'], newSecret)).toBe(true);

      const third = (
        await api.call<Data<{ secret: string }>>('PUT', '/platform/sales/webhook', {
          url: receiver.url,
          rotateImmediately: true,
        })
      ).body.data.secret;
      await api.post('/platform/sales/webhook/test');
      const last = receiver.received.at(-1)!;
      expect(last.headers['webhook-signature']!.split(' ')).toHaveLength(1);
      expect(verifySalesSignature(last.raw, last.headers['x-sales-signature'], third)).toBe(true);
    } finally {
      await receiver.stop();
    }
  });

  it('lets the example receiver reject a tampered body with 400 and act on the real one once', async () => {
    const granted: string[] = [];
    // The receiver needs the secret that saving its URL returns, so the server starts first and gets its app after.
    let app: ReturnType<typeof createSalesReceiver> | undefined;
    const server = http.createServer((req, res) => app!(req, res));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/webhooks/sales`;
    try {
      const { api, productId } = await seller(url);
      const secret = (
        await api.call<Data<{ secret: string }>>('PUT', '/platform/sales/webhook', { url, rotateImmediately: true })
      ).body.data.secret;
      app = createSalesReceiver({
        secret,
        access: { grant: (e, p) => void granted.push(`${e}:${p}`), revoke: () => undefined },
      });
      const eventId = await sell(api, productId, 'f@x.io');
      await eventually(async () => (granted.length ? true : undefined), 'the grant');
      expect(granted).toEqual([`f@x.io:${productId}`]);

      const raw = JSON.stringify(
        (await api.get<Data<{ body: unknown }>>(`/platform/sales/deliveries/${eventId}`)).body.data.body,
      );
      const tampered = raw.replace('"amount":1', '"amount":0');
      const forged = await fetch(url, {
        method: 'POST',
        headers: { 'x-sales-signature': signSalesBody(raw, secret) },
        body: tampered,
      });
      expect(forged.status).toBe(400);

      // A repeated delivery of the same event is acknowledged and not acted on twice.
      expect(
        (await api.post<Data<{ outcome: string }>>(`/platform/sales/deliveries/${eventId}/resend`)).body.data.outcome,
      ).toBe('delivered');
      expect(granted).toHaveLength(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('refuses webhook URLs that are not http(s), and private targets when they are not allowed', async () => {
    const strict = await startHarness('sales-strict', { ALLOW_PRIVATE_WEBHOOK_TARGETS: 'false' });
    try {
      const api = client(strict, (await strict.newOrg()).token);
      for (const url of [
        'ftp://example.com/x',
        'http://127.0.0.1:9/hook',
        'http://[::1]/x',
        'http://169.254.169.254/latest',
        'http://localhost/x',
      ]) {
        const r = await api.call('PUT', '/platform/sales/webhook', { url });
        expect([url, r.status]).toEqual([url, 400]);
        expect(r.body).toEqual({ status: 'error', message: expect.any(String) });
      }
    } finally {
      await strict.stop();
    }
  });
});
