import { ignore } from '../ignore';
import type { Redis } from '../redis';

/**
 * Takes a lease for `holder` in an organisation's set when fewer than `limit` unexpired leases are held (or renews
 * the holder's own). One script, so two workers never both take the last slot; the clock is Redis's own, so
 * workers with skewed clocks agree on what has expired.
 */
const TAKE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[2]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[2])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 1
end
return 0`;

export interface OrgLeaseOptions {
  /** Key prefix of this installation (REDIS_KEY_PREFIX). */
  prefix: string;
  /** Builds of one organisation at once, across every worker. */
  perOrg: number;
  /** A worker that dies holding a lease frees it after this long; a live one renews it three times as often. */
  leaseMs?: number;
  /** How often a waiting build asks again. */
  pollMs?: number;
}

/**
 * The per-organisation build bound across workers (BUILD_CONCURRENCY_PER_ORG), as leases in Redis: MongoDB
 * (FerretDB) cannot count atomically, Redis can (docs/architecture.md, "Rate limits and quotas").
 */
export function createOrgBuildLeases(redis: Redis, opts: OrgLeaseOptions) {
  const leaseMs = opts.leaseMs ?? 30_000;
  const pollMs = opts.pollMs ?? 1_000;
  const key = (orgId: string) => `${opts.prefix}build-leases:${orgId}`;
  const take = async (orgId: string, holder: string) =>
    (await redis.eval(TAKE, 1, key(orgId), String(opts.perOrg), holder, String(leaseMs))) === 1;

  return {
    /**
     * Resolves with a release function once `holder` holds one of the organisation's slots; renews it until
     * released. Rejects when `signal` aborts first.
     */
    async acquire(orgId: string, holder: string, signal: AbortSignal, onWait?: (why: string) => void) {
      let told = false;
      while (!(await take(orgId, holder))) {
        if (!told) onWait?.(`waiting for this organisation's other builds to finish (${opts.perOrg} at a time)`);
        told = true;
        await new Promise<void>((resolve, reject) => {
          const onAbort = () => {
            clearTimeout(timer);
            reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
          };
          const timer = setTimeout(() => {
            signal.removeEventListener('abort', onAbort);
            resolve();
          }, pollMs);
          signal.addEventListener('abort', onAbort, { once: true });
        });
        signal.throwIfAborted();
      }
      const renew = setInterval(
        () => void take(orgId, holder).catch(ignore('the next renewal, a third of a lease later, tries again')),
        Math.floor(leaseMs / 3),
      );
      // Never what keeps a process alive: a worker shutting down lets its leases lapse.
      renew.unref();
      let released = false;
      return async () => {
        if (released) return;
        released = true;
        clearInterval(renew);
        await redis.zrem(key(orgId), holder).catch(ignore('an unreleased lease lapses after leaseMs'));
      };
    },
    /** Holders of the organisation's leases (expired ones until the next take clears them), for tests and operators. */
    holders: (orgId: string) => redis.zrange(key(orgId), 0, -1),
  };
}

export type OrgBuildLeases = ReturnType<typeof createOrgBuildLeases>;
