import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';

import { type Stack, startStack } from '@scripts/stack';
import { mongodb } from '@scripts/stack/parts';
import { connectMongo, type Database, guard } from '@shared/db/mongo';
import { DatabaseError } from '@shared/errors';

const quiet: Parameters<typeof startStack>[0]['run'] = (jobs) =>
  Promise.allSettled(jobs.map((j) => j.start(() => undefined)));

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
 * FerretDB on SQLite (the embedded backend of data directories made before PostgreSQL became the default, or set
 * with FERRETDB_BACKEND=sqlite) keeps each database in one SQLite file with one write lock, and refuses a write that
 * waited for it longer than 10 s. Stores send such a write again rather than fail the request.
 */
describe('stores on the embedded FerretDB while SQLite is locked past its busy timeout', () => {
  const dbName = `slipway_lock_${randomUUID().slice(0, 8)}`;
  const saved = { MONGODB_URL: process.env.MONGODB_URL, FERRETDB_BACKEND: process.env.FERRETDB_BACKEND };
  let dataDir: string;
  let stack: Stack | undefined;
  let database: Database;
  beforeAll(async () => {
    // A FerretDB of its own on SQLite, whatever the suite's runs on.
    delete process.env.MONGODB_URL;
    process.env.FERRETDB_BACKEND = 'sqlite';
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-sqlite-lock-'));
    stack = await startStack({ dataDir, ports: 'free', headless: true, parts: [mongodb], run: quiet });
    database = await connectMongo(stack.env.MONGODB_URL!, dbName);
    await database.db.collection('probe').insertOne({ _id: 'seed' as never });
  }, 120_000);
  afterAll(async () => {
    await database?.close();
    await stack?.stop();
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('lands a guarded write once the lock is free, where the bare driver call fails with SQLITE_BUSY', async () => {
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
