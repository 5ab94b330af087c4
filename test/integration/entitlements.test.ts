import type { Entitlement } from '@api/features/sales/schemas';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Data<T> = { status: string; data: T };

describe('entitlement lookup GET /api/v1/entitlements (seller API key)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('entitlements', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' });
  });
  afterAll(() => h?.stop());

  async function sellerWithKey() {
    const api = client(h, (await h.newOrg()).token);
    const key = (await api.post<Data<{ apiKey: string }>>('/platform/sales/api-keys')).body.data.apiKey;
    const lookup = async (email: string, apiKey = key) => {
      const r = await fetch(`${h.baseUrl}/api/v1/entitlements?email=${encodeURIComponent(email)}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      return {
        status: r.status,
        headers: r.headers,
        body: (await r.json()) as { entitlements: Entitlement[]; error?: string },
      };
    };
    const product = async (billingType: 'ONE_TIME' | 'SUBSCRIPTION', name: string) =>
      (
        await api.post<Data<{ id: string }>>('/platform/products', {
          name,
          billingType,
          price: 10,
          currency: 'USD',
          ...(billingType === 'SUBSCRIPTION' ? { interval: 'month' } : {}),
        })
      ).body.data.id;
    const sell = async (productId: string, email: string) =>
      (
        await api.post<Data<{ saleId: string; subscriptionId?: string }>>('/platform/sales', {
          productId,
          buyer: { email, name: 'Buyer' },
          amount: 10,
          currency: 'USD',
        })
      ).body.data;
    return { api, key, lookup, product, sell };
  }

  it('lists a one-time purchase with exactly the interface fields, and drops it once refunded', async () => {
    const s = await sellerWithKey();
    const productId = await s.product('ONE_TIME', 'Ebook');
    const { saleId } = await s.sell(productId, 'Reader@Example.com');
    const r = await s.lookup('reader@example.com');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      entitlements: [
        {
          type: 'one_time',
          productId,
          productName: 'Ebook',
          status: 'active',
          saleId,
          purchasedAt: expect.stringMatching(/Z$/),
        },
      ],
    });
    expect((await s.api.post(`/platform/sales/${saleId}/refund`)).status).toBe(200);
    expect((await s.lookup('reader@example.com')).body.entitlements).toEqual([]);
    expect((await s.api.post(`/platform/sales/${saleId}/refund`)).status).toBe(400);
  });

  it('follows a subscription through active → past_due → canceled → active, and a renewal-date change', async () => {
    const s = await sellerWithKey();
    const productId = await s.product('SUBSCRIPTION', 'Pro plan');
    const { saleId, subscriptionId } = await s.sell(productId, 'sub@example.com');
    const first = (await s.lookup('sub@example.com')).body.entitlements;
    expect(first).toEqual([
      {
        type: 'subscription',
        productId,
        productName: 'Pro plan',
        status: 'active',
        saleId,
        purchasedAt: expect.any(String),
        subscriptionId,
        currentPeriodEnd: expect.any(String),
      },
    ]);
    const days = (Date.parse(first[0]!.currentPeriodEnd!) - Date.now()) / 86400_000;
    expect(days).toBeGreaterThan(27);
    expect(days).toBeLessThan(32);

    for (const [status, held] of [
      ['past_due', 0],
      ['canceled', 0],
      ['active', 1],
    ] as const) {
      const r = await s.api.call<Data<{ eventId: string | null }>>(
        'PATCH',
        `/platform/subscriptions/${subscriptionId}`,
        { status },
      );
      expect(r.body.data.eventId).toEqual(expect.any(String));
      expect((await s.lookup('sub@example.com')).body.entitlements).toHaveLength(held);
    }
    const renewal = '2031-01-31T00:00:00.000Z';
    const changed = await s.api.call<Data<{ eventId: string | null }>>(
      'PATCH',
      `/platform/subscriptions/${subscriptionId}`,
      { currentPeriodEnd: renewal },
    );
    expect(changed.body.data.eventId).toEqual(expect.any(String));
    expect((await s.lookup('sub@example.com')).body.entitlements[0]!.currentPeriodEnd).toBe(renewal);
    const unchanged = await s.api.call<Data<{ eventId: string | null }>>(
      'PATCH',
      `/platform/subscriptions/${subscriptionId}`,
      { status: 'active' },
    );
    expect(unchanged.body.data.eventId).toBeNull();
    const types = (
      await s.api.get<Data<{ deliveries: { type: string }[] }>>('/platform/sales/deliveries?type=subscription.updated')
    ).body.data.deliveries;
    expect(types).toHaveLength(4);
  });

  it('answers an empty list for an unknown e-mail and hides another seller’s buyers', async () => {
    const a = await sellerWithKey();
    const b = await sellerWithKey();
    await a.sell(await a.product('ONE_TIME', 'A'), 'shared@example.com');
    expect((await a.lookup('nobody@example.com')).body).toEqual({ entitlements: [] });
    expect((await b.lookup('shared@example.com')).body).toEqual({ entitlements: [] });
    expect((await a.lookup('shared@example.com')).body.entitlements).toHaveLength(1);
  });

  it('refuses a missing, wrong or rotated-out key with 401 {error}, and a bad e-mail with 400', async () => {
    const s = await sellerWithKey();
    const bare = await fetch(`${h.baseUrl}/api/v1/entitlements?email=a@b.co`);
    expect(bare.status).toBe(401);
    expect(await bare.json()).toEqual({ error: expect.any(String) });
    expect((await s.lookup('a@b.co', 'sk_wrong')).status).toBe(401);
    const rotated = (await s.api.post<Data<{ apiKey: string }>>('/platform/sales/api-keys')).body.data.apiKey;
    expect((await s.lookup('a@b.co', s.key)).status).toBe(401);
    expect((await s.lookup('a@b.co', rotated)).status).toBe(200);
    const bad = await s.lookup('not-an-email', rotated);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: expect.stringMatching(/email/) });
    expect((await s.api.del('/platform/sales/api-keys')).status).toBe(204);
    expect((await s.lookup('a@b.co', rotated)).status).toBe(401);
  });

  it('answers the 121st request in a minute with 429 and Retry-After', async () => {
    const s = await sellerWithKey();
    const statuses: number[] = [];
    for (let i = 0; i < 120; i++) statuses.push((await s.lookup('x@example.com')).status);
    expect(statuses.every((st) => st === 200)).toBe(true);
    const over = await s.lookup('x@example.com');
    expect(over.status).toBe(429);
    expect(over.body).toEqual({ error: expect.any(String) });
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
