import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';

import { connectMongo, type Database, guard } from '@shared/db/mongo';
import { DatabaseError } from '@shared/errors';

/** Holds SQLite's write lock on `file` from outside FerretDB for `seconds`, as a long stream of writers would. */
async function holdWriteLock(file: string, seconds: number) {
  const script = [
    'import sqlite3, sys, time',
    'c = sqlite3.connect(sys.argv[1], isolation_level=None)',
    'c.execute("BEGIN IMMEDIATE")',
    'print("locked", flush=True)',
    'time.sleep(float(sys.argv[2]))',
    'c.execute("ROLLBACK")',
  ].join('\n');
  const proc = spawn('python3', ['-c', script, file, String(seconds)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const released = new Promise<number | null>((resolve) => proc.once('exit', resolve));
  for await (const line of createInterface({ input: proc.stdout }))
    if (line === 'locked') return { released, kill: () => proc.kill() };
  throw new Error(`could not lock ${file} (python3 exited ${String(await released)}; its stderr is above)`);
}

/**
 * The embedded FerretDB keeps each database in one SQLite file with one write lock, and refuses a write that
 * waited for it longer than 10 s. Stores send such a write again rather than fail the request.
 */
describe('stores on the embedded FerretDB while SQLite is locked past its busy timeout', () => {
  const dbName = `slipway_lock_${randomUUID().slice(0, 8)}`;
  let database: Database;
  beforeAll(async () => {
    database = await connectMongo(process.env.MONGODB_URL!, dbName);
    await database.db.collection('probe').insertOne({ _id: 'seed' as never });
  });
  afterAll(async () => {
    await database?.db.dropDatabase();
    await database?.close();
  });

  it('lands a guarded write once the lock is free, where the bare driver call fails with SQLITE_BUSY', async () => {
    const dataDir = process.env.SLIPWAY_TEST_DATA_DIR;
    if (!dataDir) throw new Error('SLIPWAY_TEST_DATA_DIR is unset: run the suite with `npm test`');
    const col = database.db.collection<{ _id: string; n: number }>('probe');
    // FerretDB 1.24 gives a bare insert up after two 10 s busy waits (20 s); a retry after that finds the lock free.
    const lock = await holdWriteLock(path.join(dataDir, 'ferretdb', `${dbName}.sqlite`), 25);
    try {
      const [bare, guarded] = await Promise.allSettled([
        col.insertOne({ _id: 'bare', n: 1 }),
        guard('probe.insert', () => col.insertOne({ _id: 'guarded', n: 1 })),
      ]);
      expect(bare.status).toBe('rejected');
      expect(String((bare as PromiseRejectedResult).reason)).toMatch(/SQLITE_BUSY/);
      expect(guarded.status).toBe('fulfilled');
      expect(await lock.released).toBe(0);
      expect(await col.find({ _id: { $in: ['bare', 'guarded'] } }).toArray()).toEqual([{ _id: 'guarded', n: 1 }]);
    } finally {
      lock.kill();
    }
  }, 60_000);

  it('turns other database errors, such as a duplicate key, into a DatabaseError', async () => {
    const col = database.db.collection<{ _id: string }>('probe');
    await expect(guard('probe.insert', () => col.insertOne({ _id: 'seed' }))).rejects.toBeInstanceOf(DatabaseError);
  });
});
