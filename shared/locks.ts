import { randomUUID } from 'node:crypto';

import { AppError } from './errors';
import { ignore } from './ignore';
import type { Redis } from './redis';

/** Deletes the key only if it still holds our token: a lock that expired and was taken by another stays theirs. */
const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

export interface KeyedLockOptions {
  /** Longest a holder may keep the lock before Redis drops it (a crashed api never blocks a key for good). */
  ttlMs?: number;
  /** Longest a caller waits for a held lock before it is told to retry. */
  waitMs?: number;
}

/**
 * Mutual exclusion per key, in Redis: what FerretDB cannot give (no atomic read-modify-write, shared/db/mongo.ts)
 * for an invariant across several documents — "a project keeps one admin" is a count then a write, and two
 * concurrent demotions would both see two admins. Holders run one at a time per key; other keys are untouched.
 * The TTL is far beyond the few reads and writes a holder makes, so it only matters for an api that died holding it.
 */
export function createKeyedLock(redis: Redis, keyPrefix: string, opts: KeyedLockOptions = {}) {
  const ttlMs = opts.ttlMs ?? 30_000;
  const waitMs = opts.waitMs ?? 10_000;
  return async function withLock<T>(key: string, what: string, fn: () => Promise<T>): Promise<T> {
    const redisKey = `${keyPrefix}lock:${key}`;
    const token = randomUUID();
    const deadline = Date.now() + waitMs;
    while ((await redis.set(redisKey, token, 'PX', ttlMs, 'NX')) !== 'OK') {
      if (Date.now() >= deadline) {
        throw new AppError('CONFLICT', `Another change to ${what} is in progress; retry in a moment.`);
      }
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 40));
    }
    try {
      return await fn();
    } finally {
      await redis.eval(RELEASE, 1, redisKey, token).catch(ignore('the key expires after ttlMs if Redis missed this'));
    }
  };
}

export type KeyedLock = ReturnType<typeof createKeyedLock>;
