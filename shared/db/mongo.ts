import { type Db, MongoClient } from 'mongodb';

import { DatabaseError } from '../errors';

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

/** Runs a driver call; any failure becomes a DatabaseError so driver messages stay out of responses. */
export async function guard<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new DatabaseError(operation, err);
  }
}

export function isDuplicateKey(err: unknown): boolean {
  const cause = err instanceof DatabaseError ? err.cause : err;
  return typeof cause === 'object' && cause !== null && (cause as { code?: unknown }).code === 11000;
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
