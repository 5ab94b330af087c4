import { randomUUID } from 'node:crypto';

import { isDuplicateKey } from '@shared/db/mongo';
import { AppError } from '@shared/errors';
import { completeSale as completeSaleRecords, derivedId, eventPayload } from '@shared/sales/records';
import type { ProductRecord, SaleRecord, SubscriptionStatus } from '@shared/sales/store';

import { type EventDelivery, notFound, type SalesDeps } from './delivery';

/** The products list answers this many at most, newest first. */
export const MAX_PRODUCTS_LISTED = 200;

/** The checkout's records: products, paid sales and their subscriptions, refunds; each change emits its event. */
export function createRecordsService(deps: Pick<SalesDeps, 'store'>, delivery: EventDelivery) {
  const { store } = deps;

  /** Everything a recorded sale implies (safe to run again), then the delivery of its event. */
  async function completeSale(sale: SaleRecord, product: ProductRecord) {
    const done = await completeSaleRecords(store, sale, product);
    await delivery.startDelivery(sale.orgId, done.eventId);
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
    listProducts: (orgId: string) => store.listProducts(orgId, MAX_PRODUCTS_LISTED),

    /** A page of sales, newest first, each with its product's name (the product is never deleted). */
    async listSales(orgId: string, q: { limit: number; offset: number }) {
      const { items, total } = await store.listSales(orgId, q.limit, q.offset);
      const products = await store.productsByIds(orgId, [...new Set(items.map((s) => s.productId))]);
      const names = new Map(products.map((p) => [p._id, p.name]));
      return { items: items.map((s) => ({ ...s, productName: names.get(s.productId) ?? '' })), total };
    },

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
      const eventId = await delivery.emit(orgId, 'sale.refunded', derivedId(`${saleId}:sale.refunded`), (id, at) =>
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
      const eventId = await delivery.emit(orgId, 'subscription.updated', randomUUID(), (eid, at) =>
        eventPayload(eid, 'subscription.updated', at, ctx.sale, ctx.product, ctx.subscription),
      );
      return { subscriptionId: id, eventId };
    },
  };
}
