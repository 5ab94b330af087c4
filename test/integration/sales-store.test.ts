import { randomUUID } from 'node:crypto';

import { connectMongo, type Database } from '@shared/db/mongo';
import { type AttemptRecord, createSalesStore, type SalesStore } from '@shared/sales/store';

/** The sales store on the real FerretDB: what must hold under concurrency does. */
describe('sales store', () => {
  const dbName = `slipway_sales_${randomUUID().slice(0, 8)}`;
  let database: Database;
  let store: SalesStore;

  beforeAll(async () => {
    database = await connectMongo(process.env.MONGODB_URL!, dbName);
    store = createSalesStore(database.db);
    await store.ensureIndexes();
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  const attempt = (key: string, at: Date): AttemptRecord => ({
    number: 1,
    key,
    trigger: key.startsWith('auto') ? 'auto' : 'manual',
    scheduledAt: at,
    at,
    durationMs: 5,
    responseStatus: 200,
    responseHeaders: {},
    responseBody: '',
    errorClass: null,
    error: null,
    nextAttemptAt: null,
  });

  it('keeps every attempt of one event recorded at once, and each attempt once however often it is recorded', async () => {
    const orgId = randomUUID();
    const id = randomUUID();
    await store.insertEvent({
      _id: id,
      orgId,
      type: 'test',
      body: '{}',
      createdAt: new Date(),
      status: 'pending',
      attempts: [],
    });
    const keys = Array.from({ length: 20 }, (_, i) => (i === 0 ? 'auto-1' : `manual-${i}`));
    const base = Date.now();
    await Promise.all(keys.map((k, i) => store.recordAttempt(id, attempt(k, new Date(base + i)), 'delivered')));
    // A retried record of an attempt already stored (its activity ran again) adds nothing.
    await store.recordAttempt(id, attempt('auto-1', new Date(base)), 'delivered');

    const event = await store.getEvent(orgId, id);
    expect(event?.attempts.map((a) => a.key)).toEqual(keys);
    expect(event?.status).toBe('delivered');
    expect((await store.listEvents({ orgId, limit: 10, offset: 0 })).items[0]?.attempts).toHaveLength(20);
    expect(await store.getEvent(randomUUID(), id)).toBeNull();
  });
});
