import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';
import { appendNumbered, type AttemptRecord, readNumbered, type StoredAttempt } from './attempt-log';

export type { AttemptRecord } from './attempt-log';

export type BillingType = 'ONE_TIME' | 'SUBSCRIPTION';
export type SubscriptionStatus = 'active' | 'past_due' | 'canceled';
export type EventType = 'sale.completed' | 'sale.refunded' | 'subscription.updated' | 'test';
export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface SigningSecret {
  value: string;
  createdAt: Date;
  /** Set on a replaced secret: it keeps signing the Standard Webhooks header until then. */
  retiresAt?: Date;
}

export interface SellerRecord {
  _id: string; // the organisation
  webhook?: { url: string; secrets: SigningSecret[] };
  /** `prefix`: the key's first characters, shown to tell keys apart (keys made before it was kept have none). */
  apiKey?: { hash: string; createdAt: Date; prefix?: string };
}

export interface ProductRecord {
  _id: string;
  orgId: string;
  name: string;
  billingType: BillingType;
  price: number;
  currency: string;
  interval?: 'month' | 'year';
  createdAt: Date;
}

export interface SaleRecord {
  _id: string;
  orgId: string;
  productId: string;
  buyer: { email: string; emailLower: string; name: string };
  quantity: number;
  amount: number;
  currency: string;
  salesCode: string;
  subscriptionId?: string;
  /**
   * The caller's idempotency key (the body's `requestId`): the sale's `_id` is derived from it, so a retried request
   * finds this one. Sales recorded before the rename hold it as `requestId`; nothing reads it back.
   */
  idempotencyKey?: string;
  refundedAt?: Date;
  createdAt: Date;
}

export interface SubscriptionRecord {
  _id: string;
  orgId: string;
  saleId: string;
  productId: string;
  buyerEmailLower: string;
  status: SubscriptionStatus;
  currentPeriodEnd: Date;
  createdAt: Date;
  updatedAt: Date;
}

/** An event and its delivery log: the body is stored as sent, so every attempt sends the same bytes. */
export interface EventRecord {
  _id: string;
  orgId: string;
  type: EventType;
  body: string;
  createdAt: Date;
  status: DeliveryStatus;
  attempts: AttemptRecord[];
  /**
   * Set on every event recorded since attempts are numbered by `_id` (shared/sales/attempt-log.ts). Events from
   * before keep their attempts under `<eventId>:<key>`, read by `eventId`.
   */
  numberedAttempts?: true;
}

export function createSalesStore(db: Db) {
  const sellers = db.collection<SellerRecord>('sellers');
  const products = db.collection<ProductRecord>('products');
  const sales = db.collection<SaleRecord>('sales');
  const subscriptions = db.collection<SubscriptionRecord>('subscriptions');
  const events = db.collection<EventRecord>('events');
  const attempts = db.collection<StoredAttempt>('event_attempts');

  /** Events with their delivery log, oldest attempt first (events from before attempts had their own documents
   * keep the ones they carry). */
  async function withAttempts<E extends Pick<EventRecord, '_id'> & { attempts?: AttemptRecord[] }>(
    list: E[],
  ): Promise<(E & { attempts: AttemptRecord[] })[]> {
    if (list.length === 0) return [];
    const stored = await guard('events.attempts', () =>
      attempts.find({ eventId: { $in: list.map((e) => e._id) } }).toArray(),
    );
    return list.map((e) => merged(e, stored));
  }
  /** The event with the attempts stored for it (those among `stored` that are its own), oldest first. */
  function merged<E extends Pick<EventRecord, '_id'> & { attempts?: AttemptRecord[] }>(e: E, stored: StoredAttempt[]) {
    const own = stored.filter((a) => a.eventId === e._id).map(({ _id: _, eventId: __, ...a }) => a as AttemptRecord);
    const legacy = (e.attempts ?? []).filter((a) => !own.some((o) => o.key === a.key));
    return { ...e, attempts: [...legacy, ...own].sort((a, b) => a.at.getTime() - b.at.getTime()) };
  }
  const withAttemptsOf = async (e: EventRecord | null) => (e ? (await withAttempts([e]))[0]! : null);

  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('sales.createIndexes', async () => {
        await sellers.createIndex({ 'apiKey.hash': 1 });
        await sales.createIndex({ orgId: 1, 'buyer.emailLower': 1 });
        await sales.createIndex({ createdAt: 1 });
        await subscriptions.createIndex({ orgId: 1, buyerEmailLower: 1 });
        await events.createIndex({ orgId: 1, createdAt: -1 });
        // The outbox sweep reads pending events oldest first.
        await events.createIndex({ status: 1, createdAt: 1 });
        await attempts.createIndex({ eventId: 1 });
      });
    },
    getSeller: (orgId: string) => guard('sellers.get', () => sellers.findOne({ _id: orgId })),
    setWebhook: (orgId: string, webhook: NonNullable<SellerRecord['webhook']>) =>
      guard('sellers.setWebhook', () => sellers.updateOne({ _id: orgId }, { $set: { webhook } }, { upsert: true })),
    setApiKey: (orgId: string, apiKey: SellerRecord['apiKey'] | null) =>
      guard('sellers.setApiKey', () =>
        sellers.updateOne({ _id: orgId }, apiKey ? { $set: { apiKey } } : { $unset: { apiKey: '' } }, { upsert: true }),
      ),
    findSellerByKeyHash: (hash: string) => guard('sellers.byKey', () => sellers.findOne({ 'apiKey.hash': hash })),

    insertProduct: (p: ProductRecord) => guard('products.insert', () => products.insertOne(p)),
    getProduct: (orgId: string, id: string) => guard('products.get', () => products.findOne({ _id: id, orgId })),
    /** The organisation's products, newest first (a seller keeps a catalogue, not thousands). */
    listProducts: (orgId: string, limit: number) =>
      guard('products.list', () => products.find({ orgId }).sort({ createdAt: -1, _id: 1 }).limit(limit).toArray()),
    productsByIds: (orgId: string, ids: string[]) =>
      guard('products.byIds', () => products.find({ orgId, _id: { $in: ids } }).toArray()),

    insertSale: (s: SaleRecord) => guard('sales.insert', () => sales.insertOne(s)),
    getSale: (orgId: string, id: string) => guard('sales.get', () => sales.findOne({ _id: id, orgId })),
    markRefunded: async (orgId: string, id: string, at: Date) =>
      (
        await guard('sales.refund', () =>
          sales.updateOne({ _id: id, orgId, refundedAt: { $exists: false } }, { $set: { refundedAt: at } }),
        )
      ).modifiedCount === 1,
    async listSales(orgId: string, limit: number, offset: number) {
      const [items, total] = await Promise.all([
        guard('sales.list', () =>
          sales.find({ orgId }).sort({ createdAt: -1, _id: 1 }).skip(offset).limit(limit).toArray(),
        ),
        guard('sales.count', () => sales.countDocuments({ orgId })),
      ]);
      return { items, total };
    },
    salesOfBuyer: (orgId: string, emailLower: string) =>
      guard('sales.ofBuyer', () =>
        sales.find({ orgId, 'buyer.emailLower': emailLower }).sort({ createdAt: 1 }).toArray(),
      ),

    insertSubscription: (s: SubscriptionRecord) => guard('subscriptions.insert', () => subscriptions.insertOne(s)),
    getSubscription: (orgId: string, id: string) =>
      guard('subscriptions.get', () => subscriptions.findOne({ _id: id, orgId })),
    updateSubscription: (
      orgId: string,
      id: string,
      set: Partial<Pick<SubscriptionRecord, 'status' | 'currentPeriodEnd'>>,
    ) =>
      guard('subscriptions.update', () =>
        subscriptions.updateOne({ _id: id, orgId }, { $set: { ...set, updatedAt: new Date() } }),
      ),
    subscriptionsByIds: (orgId: string, ids: string[]) =>
      guard('subscriptions.byIds', () => subscriptions.find({ orgId, _id: { $in: ids } }).toArray()),

    insertEvent: (e: EventRecord) => guard('events.insert', () => events.insertOne({ ...e, numberedAttempts: true })),
    /** Inserts an event unless one with its (deterministic) `_id` exists: finishing a request that died half-way. */
    async ensureEvent(e: EventRecord): Promise<void> {
      try {
        await guard('events.insert', () => events.insertOne({ ...e, numberedAttempts: true }));
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    },
    async ensureSubscription(s: SubscriptionRecord): Promise<void> {
      try {
        await guard('subscriptions.insert', () => subscriptions.insertOne(s));
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
    },
    /** Pending events created since `since`, oldest first, after the cursor (the outbox sweep pages with it). */
    pendingEventsSince: (since: Date, after: { createdAt: Date; id: string } | null, limit: number) =>
      guard('events.pending', () =>
        events
          .find(
            {
              status: 'pending',
              type: { $ne: 'test' },
              createdAt: { $gte: since },
              ...(after
                ? {
                    $or: [
                      { createdAt: { $gt: after.createdAt } },
                      { createdAt: after.createdAt, _id: { $gt: after.id } },
                    ],
                  }
                : {}),
            },
            { projection: { _id: 1, orgId: 1, createdAt: 1 } },
          )
          .sort({ createdAt: 1, _id: 1 })
          .limit(limit)
          .toArray(),
      ),
    /** Pending events older than `before` that were never attempted: the outbox gives up on them. */
    unattemptedBefore: async (before: Date, limit: number) =>
      (
        await withAttempts(
          await guard('events.stale', () =>
            events
              .find({ status: 'pending', createdAt: { $lt: before } }, { projection: { _id: 1, attempts: 1 } })
              .limit(limit)
              .toArray(),
          ),
        )
      )
        .filter((e) => e.attempts.length === 0)
        .map((e) => e._id),
    /** Sales recorded in [from, to), for the outbox's check that each has its sale.completed event. */
    salesCreatedBetween: (from: Date, to: Date, limit: number) =>
      guard('sales.between', () =>
        sales
          .find({ createdAt: { $gte: from, $lt: to } })
          .limit(limit)
          .toArray(),
      ),
    existingEventIds: async (ids: string[]) =>
      (
        await guard('events.existing', () => events.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray())
      ).map((e) => e._id),
    sellersWithWebhook: async (orgIds: string[]) =>
      (
        await guard('sellers.withWebhook', () =>
          sellers.find({ _id: { $in: orgIds }, webhook: { $exists: true } }, { projection: { _id: 1 } }).toArray(),
        )
      ).map((s) => s._id),
    getEvent: async (orgId: string, id: string) =>
      withAttemptsOf(await guard('events.get', () => events.findOne({ _id: id, orgId }))),
    /** An event and its delivery log, read by `_id` where the event numbers its attempts: every attempt starts here. */
    async getEventAny(id: string): Promise<EventRecord | null> {
      const event = await guard('events.getAny', () => events.findOne({ _id: id }));
      if (!event?.numberedAttempts) return withAttemptsOf(event);
      return { ...event, attempts: [...(event.attempts ?? []), ...(await readNumbered(attempts, id))] };
    },
    /**
     * Records an attempt of `event` (as read with its log) once, under the event's next number, then the event's
     * status. A retried record of the same attempt finds it there: by key where attempts are numbered, by `_id`
     * (`<eventId>:<key>`) on an event from before.
     */
    async recordAttempt(
      event: Pick<EventRecord, '_id' | 'attempts' | 'numberedAttempts'>,
      attempt: Omit<AttemptRecord, 'number'>,
      status?: DeliveryStatus,
    ): Promise<AttemptRecord> {
      const id = event._id;
      let stored: AttemptRecord = { ...attempt, number: event.attempts.length + 1 };
      if (event.numberedAttempts) stored = await appendNumbered(attempts, id, attempt, event.attempts.length + 1);
      else
        try {
          await guard('events.recordAttempt', () =>
            attempts.insertOne({ _id: `${id}:${attempt.key}`, eventId: id, ...stored }),
          );
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
        }
      if (status) await guard('events.setStatus', () => events.updateOne({ _id: id }, { $set: { status } }));
      return stored;
    },
    setEventStatus: (id: string, status: DeliveryStatus) =>
      guard('events.setStatus', () => events.updateOne({ _id: id }, { $set: { status } })),
    /** Only a still-pending event changes; one delivered meanwhile keeps its status. */
    failPending: (id: string) =>
      guard('events.failPending', () =>
        events.updateOne({ _id: id, status: 'pending' }, { $set: { status: 'failed' } }),
      ),
    async listEvents(q: {
      orgId: string;
      status?: DeliveryStatus;
      type?: EventType;
      since?: Date;
      limit: number;
      offset: number;
    }) {
      const filter: Filter<EventRecord> = { orgId: q.orgId };
      if (q.status) filter.status = q.status;
      if (q.type) filter.type = q.type;
      if (q.since) filter.createdAt = { $gte: q.since };
      const [items, total] = await Promise.all([
        guard('events.list', () =>
          events.find(filter).sort({ createdAt: -1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ).then(withAttempts),
        guard('events.count', () => events.countDocuments(filter)),
      ]);
      return { items, total };
    },
  };
}

export type SalesStore = ReturnType<typeof createSalesStore>;
