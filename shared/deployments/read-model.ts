import { ignore } from '../ignore';
import type { Redis } from '../redis';
import type { ReleasesSummary, ReleaseStore } from './releases-store';
import type { DeploymentStore } from './store';
import { type DeploymentRecord, envNamesOf } from './types';

/** Releases a status read shows; GET …/releases pages through the rest. */
export const RECENT_RELEASES = 5;

/** A deployment as a status read shows it: the record without its env values (names only), and its newest releases. */
export type StatusRecord = Omit<DeploymentRecord, 'envSealed' | 'envVars'>;
export interface StatusSnapshot {
  record: StatusRecord;
  releases: ReleasesSummary;
}

/**
 * How long an entry outlives its last write. Past it a read falls back to MongoDB and fills it again; it bounds what
 * deployments nobody reads cost in Redis, and a destroy's tombstone is needed only while a fill that began before
 * the destroy could still land.
 */
const ENTRY_TTL_S = 24 * 3600;
/**
 * How long an entry a reader filled (from MongoDB, on a miss) lives unless a writer rewrites it. A worker that does
 * not keep this model (one from before it, or one told another REDIS_KEY_PREFIX) never would: its deployments' reads
 * then lag its writes by at most this, as the followers' recheck does, instead of showing the fill for a day.
 */
const FILL_TTL_S = 30;

/**
 * Writes a snapshot unless the entry already holds a newer one: a higher record `version` (the workflow's step
 * counter), or the same version read later, by the ticket each writer takes before its MongoDB read (changes that
 * keep the version: a release's status). A tombstone (a destroy) is never replaced. One script, so the compare and
 * the write are one step in Redis: two writers racing (the worker after a change, the api filling a miss) cannot
 * leave the older snapshot in place.
 */
const PUT = `
local cur = redis.call('HMGET', KEYS[1], 'gone', 'v', 't')
if cur[1] then return 0 end
if cur[2] then
  local v, t = tonumber(cur[2]), tonumber(cur[3])
  local nv, nt = tonumber(ARGV[1]), tonumber(ARGV[2])
  if nv < v or (nv == v and nt <= t) then return 0 end
end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 't', ARGV[2], 'doc', ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
`;

/**
 * A writer's ticket, taken before its MongoDB read: the counter, never below Redis' clock in microseconds, so that
 * tickets keep growing even if the counter key is lost (evicted, a flushed Redis) while entries survive.
 */
const TICKET = `
local now = redis.call('TIME')
local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
local n = redis.call('INCR', KEYS[1])
if n < floor then
  redis.call('SET', KEYS[1], floor)
  n = floor
end
return n
`;

/** Replaces whatever the entry held by a tombstone: destroyed is final, and a read of it is a 404 at once. */
const BURY = `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'gone', '1')
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
`;

type ModelRedis = Redis & {
  statusModelTicket(key: string): Promise<number>;
  statusModelPut(key: string, version: number, ticket: number, doc: string, ttlS: number): Promise<number>;
  statusModelBury(key: string, ttlS: number): Promise<number>;
};

const date = (v: unknown) => new Date(v as string);

/** The snapshot as JSON stores it, its dates revived (they come back as ISO strings). */
function revive(doc: string): StatusSnapshot {
  const s = JSON.parse(doc) as StatusSnapshot;
  const r = s.record;
  r.createdAt = date(r.createdAt);
  r.updatedAt = date(r.updatedAt);
  if (r.destroyedAt) r.destroyedAt = date(r.destroyedAt);
  for (const e of r.events) e.at = date(e.at);
  if (r.lastFailure) r.lastFailure.at = date(r.lastFailure.at);
  for (const rel of s.releases.recent) {
    rel.createdAt = date(rel.createdAt);
    if (rel.readyAt) rel.readyAt = date(rel.readyAt);
    if (rel.endedAt) rel.endedAt = date(rel.endedAt);
  }
  return s;
}

/** What a status read needs of a record: never its env values, sealed or (older records) in the clear. */
function statusRecord(d: DeploymentRecord): StatusRecord {
  const { envSealed: _sealed, envVars: _clear, ...rest } = d;
  return { ...rest, envNames: envNamesOf(d) };
}

export type ModelRead = { found: StatusSnapshot } | { gone: true } | { missing: true };

/**
 * The status read model: each deployment's status snapshot in Redis, so a status read costs one Redis round trip
 * instead of MongoDB reads. MongoDB stays the source of truth: whoever changes what a status read shows rewrites the
 * entry from it before telling anyone (the worker after each status and release write, the api's and reconciler's
 * destroys), and a read that finds no entry reads MongoDB and fills it. Every write is from a MongoDB read made after
 * a ticket was taken, and `PUT` keeps the newest, so an entry never steps back behind a write whose refresh returned.
 */
export function createStatusModel(deps: {
  redis: Redis;
  keyPrefix: string;
  store: Pick<DeploymentStore, 'findAny'> & { releases: Pick<DeploymentStore['releases'], 'list'> };
  /** How long a reader's fill lives unless a writer rewrites it (FILL_TTL_S; shorter in tests). */
  fillTtlS?: number;
}) {
  const fillTtlS = deps.fillTtlS ?? FILL_TTL_S;
  const redis = deps.redis as ModelRedis;
  // Defined once per connection; ioredis sends EVALSHA and falls back to EVAL after a Redis restart.
  if (typeof (deps.redis as { statusModelPut?: unknown }).statusModelPut !== 'function') {
    redis.defineCommand('statusModelTicket', { numberOfKeys: 1, lua: TICKET });
    redis.defineCommand('statusModelPut', { numberOfKeys: 1, lua: PUT });
    redis.defineCommand('statusModelBury', { numberOfKeys: 1, lua: BURY });
  }
  const key = (id: string) => `${deps.keyPrefix}deployment-read:${id}`;
  // One counter for every deployment: it only orders the MongoDB reads behind the writes to one entry.
  const ticketKey = `${deps.keyPrefix}deployment-read-ticket`;

  async function releasesOf(id: string): Promise<ReleasesSummary> {
    const { items, total } = await deps.store.releases.list(id, { limit: RECENT_RELEASES, offset: 0 });
    return { total, recent: items };
  }

  /**
   * Reads the deployment from MongoDB (after taking a ticket) and writes what it found into the model: the snapshot,
   * or a tombstone once it is destroyed. Returns the snapshot, or undefined when there is no live deployment.
   * `writer`: a write that must reach the model (Redis failing throws, and an unknown ID is buried too); a reader's
   * fill only tries, and answers from MongoDB whatever Redis does.
   */
  async function load(id: string, writer: boolean): Promise<StatusSnapshot | undefined> {
    const attempt = <T>(p: Promise<T>) => (writer ? p : p.catch(ignore('a missing entry is filled by a later read')));
    const ticket = writer || redis.status === 'ready' ? await attempt(redis.statusModelTicket(ticketKey)) : undefined;
    const record = await deps.store.findAny(id);
    if (!record || record.destroyedAt) {
      // A guessed ID a reader asked for leaves nothing in Redis.
      if (ticket !== undefined && (writer || record)) await attempt(redis.statusModelBury(key(id), ENTRY_TTL_S));
      return undefined;
    }
    const snapshot = { record: statusRecord(record), releases: await releasesOf(id) };
    if (ticket !== undefined)
      await attempt(
        redis.statusModelPut(
          key(id),
          record.version,
          ticket,
          JSON.stringify(snapshot),
          writer ? ENTRY_TTL_S : fillTtlS,
        ),
      );
    return snapshot;
  }

  return {
    /** The writers' refresh, after their MongoDB write and before they announce it. */
    refresh: (id: string) => load(id, true),

    /** A reader's fill of a missing entry; answers from MongoDB even when Redis fails. */
    fill: (id: string) => load(id, false),

    /** Marks the deployment destroyed: from now on a read of it is a 404, whatever a late writer brings. */
    async bury(id: string): Promise<void> {
      await redis.statusModelBury(key(id), ENTRY_TTL_S);
    },

    /**
     * The entry as it is: a snapshot, destroyed, or missing (never written, expired, evicted). Missing too when
     * Redis is not connected, without waiting for it: the caller reads MongoDB instead.
     */
    async read(id: string): Promise<ModelRead> {
      if (redis.status !== 'ready') return { missing: true };
      const [gone, doc] = await redis.hmget(key(id), 'gone', 'doc');
      if (gone) return { gone: true };
      return doc ? { found: revive(doc) } : { missing: true };
    },
  };
}

export type StatusModel = ReturnType<typeof createStatusModel>;

/**
 * The release store as the worker uses it: a release written (a new one, a status) changes what status reads show,
 * so the model is refreshed after it, its failure failing the write so the activity is retried.
 */
export function modelledReleases<R extends Pick<ReleaseStore, 'insert' | 'setStatus'>>(
  releases: R,
  model: Pick<StatusModel, 'refresh'> | undefined,
): R {
  if (!model) return releases;
  const insert: ReleaseStore['insert'] = async (release) => {
    const stored = await releases.insert(release);
    await model.refresh(release.deploymentId);
    return stored;
  };
  const setStatus: ReleaseStore['setStatus'] = async (deploymentId, ...rest) => {
    await releases.setStatus(deploymentId, ...rest);
    await model.refresh(deploymentId);
  };
  return Object.assign(Object.create(releases) as R, releases, { insert, setStatus });
}
