import type { TestWorkflowEnvironment } from '@temporalio/testing';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { startReceiver } from '../helpers/receiver';
import { startTimeSkipping } from '../helpers/time-skipping';

type Data<T> = { status: string; data: T };
interface Attempt {
  number: number;
  trigger: string;
  scheduledAt: string;
  nextAttemptAt: string | null;
  responseStatus: number | null;
  errorClass: string | null;
}
interface Delivery {
  status: string;
  attempts: Attempt[];
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Workflow time moves on in real time between our steps; an attempt lands this close to where it is due. */
const SLACK_MS = 5_000;

/**
 * The whole default retry schedule (a day long) on Temporal's time-skipping test server: the api and the worker
 * run as in production, and the test moves workflow time forward itself, so each attempt is checked against
 * its row of the table and shown not to come early.
 */
describe('webhook retry schedule under time-skipping', () => {
  let env: TestWorkflowEnvironment;
  let h: Harness;
  beforeAll(async () => {
    env = await startTimeSkipping();
    h = await startHarness('schedule', { TEMPORAL_ADDRESS: env.address, ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true' });
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await env?.teardown();
  });

  /**
   * Sells once to a receiver that always answers 503 and walks workflow time through the schedule: each attempt
   * lands at its due time (each delay after the previous attempt, the last `finalAfterFirst` after the first) and
   * not before, then the event is failed and nothing more is sent.
   */
  async function expectSchedule(h: Harness, afterPrevious: number[], finalAfterFirst: number) {
    const total = afterPrevious.length + 2;
    const receiver = await startReceiver(() => ({ status: 503 }));
    try {
      const api = client(h, (await h.newOrg()).token);
      await api.call('PUT', '/platform/sales/webhook', { url: receiver.url });
      const product = await api.post<Data<{ id: string }>>('/platform/products', {
        name: 'Course',
        billingType: 'ONE_TIME',
        price: 10,
        currency: 'USD',
      });
      const sale = await api.post<Data<{ eventId: string }>>('/platform/sales', {
        productId: product.body.data.id,
        buyer: { email: 'ada@example.com', name: 'Ada' },
        amount: 10,
        currency: 'USD',
      });
      expect(sale.status).toBe(200);
      const eventId = sale.body.data.eventId;
      const delivery = async () => (await api.get<Data<Delivery>>(`/platform/sales/deliveries/${eventId}`)).body.data;
      const attempts = (n: number) =>
        eventually(async () => {
          const d = await delivery();
          return d.attempts.length >= n ? d : undefined;
        }, `attempt ${n} of event ${eventId}`);

      let d = await attempts(1);
      const attempt = (n: number): Attempt => {
        const a = d.attempts[n - 1];
        if (!a) throw new Error(`attempt ${n} is missing: ${JSON.stringify(d)}`);
        return a;
      };
      const first = Date.parse(attempt(1).scheduledAt);
      for (let n = 2; n <= total; n++) {
        const previous = attempt(n - 1);
        const delay = afterPrevious[n - 2];
        const due = delay !== undefined ? Date.parse(previous.scheduledAt) + delay : first + finalAfterFirst;
        expect(previous.nextAttemptAt).not.toBeNull();
        expect(Math.abs(Date.parse(previous.nextAttemptAt as string) - due)).toBeLessThan(SLACK_MS);

        // Just short of the due time nothing more has been sent.
        await env.sleep(due - SLACK_MS - (await env.currentTimeMs()));
        await new Promise((r) => setTimeout(r, 500));
        expect((await delivery()).attempts).toHaveLength(n - 1);
        expect(receiver.received).toHaveLength(n - 1);

        await env.sleep(due + SLACK_MS - (await env.currentTimeMs()));
        d = await attempts(n);
        const sentAt = Date.parse(attempt(n).scheduledAt);
        expect(sentAt).toBeGreaterThanOrEqual(due - 1000);
        expect(sentAt - due).toBeLessThan(SLACK_MS);
        expect(attempt(n)).toMatchObject({ number: n, trigger: 'auto', responseStatus: 503 });
        expect(d.status).toBe(n < total ? 'pending' : 'failed');
      }
      expect(attempt(total).nextAttemptAt).toBeNull();
      expect(receiver.received).toHaveLength(total);
      expect(new Set(receiver.received.map((r) => r.headers['x-sales-event-id']))).toEqual(new Set([eventId]));

      // Half a day after the last attempt there is still nothing more.
      await env.sleep(12 * HOUR);
      await new Promise((r) => setTimeout(r, 500));
      expect((await delivery()).attempts).toHaveLength(total);
      expect(await h.temporal.workflow.getHandle(`webhook/${eventId}`).result()).toBe('failed');
    } finally {
      await receiver.stop();
    }
  }

  // Nothing in the environment sets WEBHOOK_*: this is the product's default table, observed, not read from config.
  it('with the defaults, tries at once, +1 min, +5 min, +30 min, then a day after the first, never earlier', async () => {
    await expectSchedule(h, [1 * MINUTE, 5 * MINUTE, 30 * MINUTE], 24 * HOUR);
  }, 120_000);

  it('follows the table it is configured with instead (WEBHOOK_RETRY_DELAYS_S, WEBHOOK_FINAL_ATTEMPT_AFTER_S)', async () => {
    const custom = await startHarness('schedule-custom', {
      TEMPORAL_ADDRESS: env.address,
      ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      WEBHOOK_RETRY_DELAYS_S: '120,600',
      WEBHOOK_FINAL_ATTEMPT_AFTER_S: '7200',
    });
    try {
      await expectSchedule(custom, [2 * MINUTE, 10 * MINUTE], 2 * HOUR);
    } finally {
      await custom.stop();
    }
  }, 120_000);
});
