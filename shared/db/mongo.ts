import { type Db, MongoClient, MongoServerError } from 'mongodb';

import { DatabaseError } from '../errors';

/**
 * The rule every store follows (docs/architecture.md, "Decisions, and why"): no correctness may depend on an atomic
 * read-modify-write in MongoDB. The embedded FerretDB runs an update as read, modify, write without isolation: 200
 * concurrent `findOneAndUpdate({_id}, {$inc: {n: 1}})` end with n between 1 and 33, and a count followed by an insert
 * lets every concurrent caller see room. So what must hold under concurrency rests on one of:
 * - a unique index (a second insert of the same key fails: idempotent IDs, one intent per deployment);
 * - inserts of immutable documents (events, intents), read back rather than counted up;
 * - one writer per document: the entity's Temporal workflow, which runs one command at a time;
 * - Redis, for counters, limits and quotas (api/middleware/rate-limit.ts, api/deployments/quota.ts).
 * A conditional update (`{version: {$lt: n}}`) is a guard against a retry of the same writer, not a lock.
 */
export interface Database {
  client: MongoClient;
  db: Db;
  close(): Promise<void>;
}

export async function connectMongo(url: string, dbName: string): Promise<Database> {
  const client = await MongoClient.connect(url, { serverSelectionTimeoutMS: 5000, appName: 'slipway' });
  const db = client.db(dbName);
  return { client, db, close: () => client.close() };
}

/**
 * FerretDB's SQLite backend (the embedded default) has one write lock per database, and gives up on a write that
 * waited longer than its busy timeout (10 s) for it: SQLITE_BUSY. SQLite rolled that statement's transaction back,
 * so it is safe to send again. MongoDB itself never answers this, so production is unaffected.
 */
function isLockBusy(err: unknown): boolean {
  return err instanceof MongoServerError && err.message.includes('SQLITE_BUSY');
}

const LOCK_BUSY_ATTEMPTS = 4;

/**
 * Sends a driver call again when FerretDB's SQLite refused it as busy. Under a steady stream of short writes its
 * busy handler can lose the lock to others for the whole timeout; a fresh attempt after a short jittered pause
 * gets it.
 */
export async function retryLockBusy<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= LOCK_BUSY_ATTEMPTS || !isLockBusy(err)) throw err;
      await new Promise((r) => setTimeout(r, 50 * attempt + Math.random() * 100));
    }
  }
}

/** Runs a driver call; any failure becomes a DatabaseError so driver messages stay out of responses. */
export async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await retryLockBusy(fn);
  } catch (err) {
    throw new DatabaseError(operation, err);
  }
}

export function isDuplicateKey(err: unknown): boolean {
  const cause = err instanceof DatabaseError ? err.cause : err;
  if (typeof cause !== 'object' || cause === null) return false;
  const { code, message } = cause as { code?: unknown; message?: unknown };
  // FerretDB's SQLite backend answers an insert's duplicate with 11000, but an update's (a rename onto a taken
  // name) with InternalError (code 1) carrying SQLite's constraint text; the statement is rolled back either way.
  return code === 11000 || (code === 1 && typeof message === 'string' && message.includes('UNIQUE constraint failed'));
}

/** Index creation at start-up, retried: api, CLI and test processes may create the same indexes at once. */
export async function ensureIndexesWithRetry(
  operation: string,
  fn: () => Promise<unknown>,
  attempts = 5,
): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await fn();
      return;
    } catch (err) {
      if (i >= attempts) throw new DatabaseError(operation, err);
      await new Promise((r) => setTimeout(r, 100 * i));
    }
  }
}
