import { randomUUID } from 'node:crypto';

import { connectMongo, type Database } from '@shared/db/mongo';
import { createLogStore, type LogStore } from '@shared/deployments/logs-store';

/** Everything but Date: the driver's own timers must keep running. */
const TIMERS: Extract<Parameters<typeof jest.useFakeTimers>[0], { doNotFake?: unknown }>['doNotFake'] = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
];

/** The platform's own log lines on the real FerretDB: a follower reading by cursor gets every line once. */
describe('deployment log store', () => {
  const dbName = `slipway_logs_${randomUUID().slice(0, 8)}`;
  let database: Database;
  let logs: LogStore;

  beforeAll(async () => {
    database = await connectMongo(process.env.MONGODB_URL!, dbName);
    logs = createLogStore(database.db);
    await logs.ensureIndexes();
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it('reads every line of two batches written in the same millisecond once, a line at a time by cursor', async () => {
    const id = randomUUID();
    // The clock stands still (only Date is faked; timers run): both batches land in the same millisecond, as a
    // build line and a system notice can.
    jest.useFakeTimers({ now: new Date('2026-11-25T12:00:00.000Z'), doNotFake: TIMERS });
    try {
      await logs.append(id, 'build', ['a1', 'a2', 'a3']);
      await logs.append(id, 'system', ['b1', 'b2']);
    } finally {
      jest.useRealTimers();
    }
    const seen: string[] = [];
    let cursor = { at: 0, seq: -1 };
    for (let page = await logs.after(id, cursor, 1); page.length > 0; page = await logs.after(id, cursor, 1)) {
      seen.push(page[0]!.message);
      cursor = page[0]!.cursor;
    }
    expect([...seen].sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2']);
    // Each batch keeps its own order.
    expect(seen.filter((m) => m.startsWith('a'))).toEqual(['a1', 'a2', 'a3']);
  });
});
