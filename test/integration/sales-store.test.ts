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
    // Each as its activity would: the event read first (none recorded yet), then the attempt recorded.
    const read = (await store.getEventAny(id))!;
    const numbers = await Promise.all(
      keys.map(async (k, i) => (await store.recordAttempt(read, attempt(k, new Date(base + i)), 'delivered')).number),
    );
    // Recorded at once, they take one number each: none counted the same log and took the same number.
    expect([...numbers].sort((a, b) => a - b)).toEqual(keys.map((_, i) => i + 1));
    // A retried record of an attempt already stored (its activity ran again) adds nothing.
    await store.recordAttempt(read, attempt('auto-1', new Date(base)), 'delivered');

    const event = await store.getEvent(orgId, id);
    expect(event?.attempts.map((a) => a.key)).toEqual(keys);
    expect(event?.status).toBe('delivered');
    expect((await store.listEvents({ orgId, limit: 10, offset: 0 })).items[0]?.attempts).toHaveLength(20);
    expect(await store.getEvent(randomUUID(), id)).toBeNull();
  });

  it('reads and extends the log of an event recorded before attempts were numbered', async () => {
    const orgId = randomUUID();
    const id = randomUUID();
    // As stored by the code before: no numberedAttempts on the event, its attempt under `<eventId>:<key>`.
    await database.db.collection('events').insertOne({
      _id: id as never,
      orgId,
      type: 'test',
      body: '{}',
      createdAt: new Date(),
      status: 'pending',
      attempts: [],
    });
    await database.db
      .collection('event_attempts')
      .insertOne({ _id: `${id}:auto-1` as never, eventId: id, ...attempt('auto-1', new Date(Date.now() - 1000)) });

    const before = (await store.getEventAny(id))!;
    expect(before.attempts.map((a) => [a.number, a.key])).toEqual([[1, 'auto-1']]);
    expect((await store.recordAttempt(before, attempt('auto-2', new Date()), 'delivered')).number).toBe(2);
    // Recorded again (a retried activity, reading the log anew): still one auto-2.
    await store.recordAttempt((await store.getEventAny(id))!, attempt('auto-2', new Date()), 'delivered');
    const after = await store.getEvent(orgId, id);
    expect(after?.attempts.map((a) => [a.number, a.key])).toEqual([
      [1, 'auto-1'],
      [2, 'auto-2'],
    ]);
    expect(after?.status).toBe('delivered');
  });
});
