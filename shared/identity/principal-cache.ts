import { randomUUID } from 'node:crypto';

import type { Logger } from '../logger';
import type { Redis } from '../redis';

/**
 * How old this process's last look at the change stamp in Redis may be when a cached principal is served: the bound
 * on a lost announcement. Older, and the next request looks again (one GET per process per interval, shared).
 */
const CHECK_EVERY_MS = 250;
/**
 * A look at Redis that takes longer than this (Redis down) is abandoned: requests read the database meanwhile, as
 * with no cache. Generous, since a slow answer is still a sound one (it counts from when it was asked), and the
 * rate limits of the same request wait on Redis anyway.
 */
const CHECK_TIMEOUT_MS = 1000;
/**
 * The last resort for a change nobody announced (a hand edit in the database, a writer that could not reach Redis):
 * an entry is read again from the database after this long, however fresh the stamp.
 */
export const CACHED_PRINCIPAL_MAX_AGE_MS = 10_000;
/** Principals kept per process; the least recently used goes first. */
const MAX_ENTRIES = 10_000;

const stampKey = (prefix: string) => `${prefix}identity:stamp`;
const changedChannel = (prefix: string) => `${prefix}identity:changed`;

/**
 * Tells every api process that a principal may have changed (a token revoked, a role changed): a new random stamp,
 * stored, then published. Call it after the write, never before, so a process that reloads on the news reads it.
 * A stamp rather than a counter: a Redis that lost its data cannot bring back a value a process already holds.
 */
export async function announceIdentityChange(redis: Redis, keyPrefix: string, stamp = randomUUID()): Promise<void> {
  await redis.set(stampKey(keyPrefix), stamp);
  await redis.publish(changedChannel(keyPrefix), stamp);
}

interface Entry<T> {
  value: T;
  generation: number;
  loadedAt: number;
}

/**
 * Principals by token hash, kept in this process. Any identity change anywhere empties every process's cache: an
 * announcement arrives by pub/sub at once; should one be lost, a cached principal is only served while this process
 * has looked at the stamp in Redis within CHECK_EVERY_MS, so a change is honoured at most that long after its
 * announcement. Only successful loads are kept; a refusal always goes back to the database.
 *
 * `generation` counts the stamps this process has seen change: an entry is served only in the generation its load
 * started in, so a load that raced a change is never kept, even if an older stamp shows up again.
 */
export function createPrincipalCache<T>(deps: {
  redis: Redis;
  keyPrefix: string;
  log?: Pick<Logger, 'warn'>;
  maxEntries?: number;
}) {
  const maxEntries = deps.maxEntries ?? MAX_ENTRIES;
  const entries = new Map<string, Entry<T>>();
  const loading = new Map<string, { generation: number; value: Promise<T> }>();
  let stamp: string | null | undefined;
  let generation = 0;
  /** When the last look that got an answer was sent (performance.now(), which no clock change moves). */
  let checkedAt = -Infinity;
  let failedAt = -Infinity;
  let checking: Promise<boolean> | undefined;
  let subscriber: Redis | undefined;

  function observe(seen: string | null) {
    if (seen === stamp) return;
    stamp = seen;
    generation++;
    entries.clear();
  }

  function subscribe() {
    if (subscriber) return;
    // As the status feed's: no ready check, since SUBSCRIBE puts the connection where INFO is refused.
    const sub = deps.redis.duplicate({ enableReadyCheck: false });
    subscriber = sub;
    deps.redis.once('end', () => sub.disconnect());
    sub.on('message', (_channel: string, message: string) => observe(message));
    // A subscription that failed or dropped costs promptness only: the look at the stamp still bounds staleness.
    sub.on('error', () => undefined);
    sub.subscribe(changedChannel(deps.keyPrefix)).catch((err: unknown) => {
      deps.log?.warn({ err }, 'identity change subscription failed; cached principals rely on the stamp check');
    });
  }

  async function check(): Promise<boolean> {
    const sentAt = performance.now();
    let timer: NodeJS.Timeout | undefined;
    try {
      const seen = await Promise.race([
        deps.redis.get(stampKey(deps.keyPrefix)),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
        }),
      ]);
      observe(seen);
      checkedAt = Math.max(checkedAt, sentAt);
      return true;
    } catch (err) {
      if (failedAt < checkedAt) deps.log?.warn({ err }, 'identity stamp unreadable; principals read from the database');
      failedAt = performance.now();
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Whether the stamp was looked at recently enough to serve from the cache (looking again if not). */
  async function fresh(): Promise<boolean> {
    const now = performance.now();
    if (now - checkedAt <= CHECK_EVERY_MS) return true;
    // Redis just failed to answer: the database, at once, rather than every request waiting out the timeout.
    if (now - failedAt <= CHECK_EVERY_MS) return false;
    checking ??= check().finally(() => {
      checking = undefined;
    });
    return checking;
  }

  function keep(key: string, entry: Entry<T>) {
    entries.delete(key);
    entries.set(key, entry);
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
  }

  return {
    /**
     * The principal of a token hash: kept, or `load()`ed (one load per hash at a time) and kept if nothing changed
     * meanwhile. A failed load is not kept. When Redis cannot say whether anything changed, every call loads.
     */
    async resolve(key: string, load: () => Promise<T>): Promise<T> {
      subscribe();
      if (!(await fresh())) return load();
      const current = generation;
      const hit = entries.get(key);
      if (hit && hit.generation === current && performance.now() - hit.loadedAt < CACHED_PRINCIPAL_MAX_AGE_MS) {
        keep(key, hit);
        return hit.value;
      }
      const pending = loading.get(key);
      if (pending && pending.generation === current) return pending.value;
      const loadedAt = performance.now();
      const value = load().then((v) => {
        if (generation === current) keep(key, { value: v, generation: current, loadedAt });
        return v;
      });
      loading.set(key, { generation: current, value });
      const done = () => {
        if (loading.get(key)?.value === value) loading.delete(key);
      };
      void value.then(done, done);
      return value;
    },

    /** After a write that may change a principal: this process forgets at once, the others on the announcement. */
    async announce(): Promise<void> {
      const next = randomUUID();
      observe(next);
      await announceIdentityChange(deps.redis, deps.keyPrefix, next);
    },
  };
}

export type PrincipalCache<T> = ReturnType<typeof createPrincipalCache<T>>;
