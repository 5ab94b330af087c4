import { addInterval, derivedId, eventPayload, saleCompletedEventId } from '@shared/sales/records';
import type { ProductRecord, SaleRecord, SubscriptionRecord } from '@shared/sales/store';

const at = (iso: string) => new Date(iso);

describe('subscription periods', () => {
  it.each([
    ['2025-03-15T10:20:30.000Z', 'month', '2025-04-15T10:20:30.000Z'],
    ['2025-12-31T23:00:00.000Z', 'month', '2026-01-31T23:00:00.000Z'],
    ['2025-03-15T10:20:30.000Z', 'year', '2026-03-15T10:20:30.000Z'],
  ] as const)('%s plus a %s is %s', (from, interval, end) => {
    expect(addInterval(at(from), interval).toISOString()).toBe(end);
  });

  it.each([
    // A month after the 31st is the last day of a shorter month, not the first days of the one after it.
    ['2025-01-31T12:00:00.000Z', 'month', '2025-02-28T12:00:00.000Z'],
    ['2024-01-31T12:00:00.000Z', 'month', '2024-02-29T12:00:00.000Z'],
    ['2025-03-31T12:00:00.000Z', 'month', '2025-04-30T12:00:00.000Z'],
    ['2025-05-30T12:00:00.000Z', 'month', '2025-06-30T12:00:00.000Z'],
    // A year after 29 February is 28 February.
    ['2024-02-29T12:00:00.000Z', 'year', '2025-02-28T12:00:00.000Z'],
  ] as const)('%s plus a %s stays in the month: %s', (from, interval, end) => {
    expect(addInterval(at(from), interval).toISOString()).toBe(end);
  });

  it('leaves the date it was given unchanged', () => {
    const from = at('2025-01-31T12:00:00.000Z');
    addInterval(from, 'month');
    expect(from.toISOString()).toBe('2025-01-31T12:00:00.000Z');
  });
});

describe('derived IDs', () => {
  it('names the same record for the same input, and another for any other', () => {
    expect(derivedId('org1:req-1')).toBe(derivedId('org1:req-1'));
    expect(derivedId('org1:req-1')).not.toBe(derivedId('org2:req-1'));
    expect(derivedId('x')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(saleCompletedEventId('sale-1')).toBe(derivedId('sale-1:sale.completed'));
    expect(saleCompletedEventId('sale-1')).not.toBe(saleCompletedEventId('sale-2'));
  });
});

describe('event payload', () => {
  const product: ProductRecord = {
    _id: 'p1',
    orgId: 'org1',
    name: 'Pro',
    billingType: 'SUBSCRIPTION',
    price: 900,
    currency: 'EUR',
    interval: 'month',
    createdAt: at('2025-01-01T00:00:00Z'),
  };
  const sale: SaleRecord = {
    _id: 's1',
    orgId: 'org1',
    productId: 'p1',
    buyer: { email: 'Ann@Example.test', emailLower: 'ann@example.test', name: 'Ann' },
    quantity: 2,
    amount: 1800,
    currency: 'EUR',
    salesCode: 'CODE',
    subscriptionId: 'sub1',
    idempotencyKey: 'req-1',
    createdAt: at('2025-01-31T12:00:00Z'),
  };
  const subscription: SubscriptionRecord = {
    _id: 'sub1',
    orgId: 'org1',
    saleId: 's1',
    productId: 'p1',
    buyerEmailLower: 'ann@example.test',
    status: 'active',
    currentPeriodEnd: at('2025-02-28T12:00:00Z'),
    createdAt: sale.createdAt,
    updatedAt: sale.createdAt,
  };

  it('carries exactly the documented fields, and nothing of the records beyond them', () => {
    const body = eventPayload('e1', 'sale.completed', at('2025-01-31T12:00:01Z'), sale, product, subscription);
    expect(JSON.parse(body)).toEqual({
      id: 'e1',
      type: 'sale.completed',
      createdAt: '2025-01-31T12:00:01.000Z',
      data: {
        saleId: 's1',
        product: { id: 'p1', name: 'Pro', billingType: 'SUBSCRIPTION' },
        buyer: { email: 'Ann@Example.test', name: 'Ann' },
        quantity: 2,
        amount: 1800,
        currency: 'EUR',
        salesCode: 'CODE',
        subscription: { id: 'sub1', status: 'active', currentPeriodEnd: '2025-02-28T12:00:00.000Z' },
      },
    });
    expect(body).not.toContain('req-1');
    expect(body).not.toContain('org1');
  });

  it('says null for a one-time sale, and gives the same bytes every time', () => {
    const once = () => eventPayload('e1', 'sale.completed', at('2025-01-31T12:00:01Z'), sale, product, null);
    expect(JSON.parse(once()).data.subscription).toBeNull();
    expect(once()).toBe(once());
  });
});
