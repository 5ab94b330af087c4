import { v5 as uuidv5 } from 'uuid';

import type { EventType, ProductRecord, SaleRecord, SalesStore, SubscriptionRecord } from './store';

/** Namespace of IDs derived from a caller's idempotency key and from a sale: retries and repairs find the same records. */
const SALES_ID_NAMESPACE = '3b0f6c2e-5d7a-4f9b-8e21-6a4c9d0b7f13';
export const derivedId = (name: string) => uuidv5(name, SALES_ID_NAMESPACE);
export const saleCompletedEventId = (saleId: string) => derivedId(`${saleId}:sale.completed`);

/**
 * The end of a period that starts at `from`: the same day and time a month or a year later, or the last day of that
 * month when it is shorter (31 January + a month is 28 or 29 February, not 2 or 3 March).
 */
export function addInterval(from: Date, interval: 'month' | 'year'): Date {
  const d = new Date(from);
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() + (interval === 'year' ? 12 : 1));
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d;
}

/** The exact payload the interface fixes (docs/architecture.md, "The interface we keep"), serialised once: every attempt sends these bytes. */
export function eventPayload(
  id: string,
  type: EventType,
  createdAt: Date,
  sale: Pick<SaleRecord, '_id' | 'quantity' | 'amount' | 'currency' | 'salesCode'> & {
    buyer: Pick<SaleRecord['buyer'], 'email' | 'name'>;
  },
  product: Pick<ProductRecord, '_id' | 'name' | 'billingType'>,
  subscription: Pick<SubscriptionRecord, '_id' | 'status' | 'currentPeriodEnd'> | null,
) {
  return JSON.stringify({
    id,
    type,
    createdAt: createdAt.toISOString(),
    data: {
      saleId: sale._id,
      product: { id: product._id, name: product.name, billingType: product.billingType },
      buyer: { email: sale.buyer.email, name: sale.buyer.name },
      quantity: sale.quantity,
      amount: sale.amount,
      currency: sale.currency,
      salesCode: sale.salesCode,
      subscription: subscription
        ? {
            id: subscription._id,
            status: subscription.status,
            currentPeriodEnd: subscription.currentPeriodEnd.toISOString(),
          }
        : null,
    },
  });
}

/**
 * Everything a recorded sale implies (its subscription, its sale.completed event), each under an ID derived from
 * the sale, so running it again never makes a second one: a retried request and the outbox's repair of a request
 * that died after inserting the sale both call it. Starting the delivery is the caller's part.
 */
export async function completeSale(
  store: Pick<SalesStore, 'ensureSubscription' | 'ensureEvent'>,
  sale: SaleRecord,
  product: ProductRecord,
) {
  let subscription: SubscriptionRecord | null = null;
  if (sale.subscriptionId) {
    subscription = {
      _id: sale.subscriptionId,
      orgId: sale.orgId,
      saleId: sale._id,
      productId: product._id,
      buyerEmailLower: sale.buyer.emailLower,
      status: 'active',
      currentPeriodEnd: addInterval(sale.createdAt, product.interval ?? 'month'),
      createdAt: sale.createdAt,
      updatedAt: sale.createdAt,
    };
    await store.ensureSubscription(subscription);
  }
  const eventId = saleCompletedEventId(sale._id);
  const createdAt = new Date();
  await store.ensureEvent({
    _id: eventId,
    orgId: sale.orgId,
    type: 'sale.completed',
    body: eventPayload(eventId, 'sale.completed', createdAt, sale, product, subscription),
    createdAt,
    status: 'pending',
    attempts: [],
  });
  return { saleId: sale._id, eventId, ...(subscription ? { subscriptionId: subscription._id } : {}) };
}
