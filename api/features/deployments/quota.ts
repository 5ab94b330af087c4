import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Db } from 'mongodb';

import { deploymentWorkflowId } from '@shared/contracts/deployment';
import { guard } from '@shared/db/mongo';
import type { DeploymentRecord } from '@shared/deployments/types';
import type { Redis } from '@shared/redis';

/**
 * Plan quotas (live deployments per organisation), enforced atomically in Redis.
 *
 * Why not MongoDB: a count followed by an insert lets every concurrent request see room (30 concurrent deploys in a
 * free org created 30 containers against a quota of 3), and FerretDB cannot make a counter atomic either: its updates
 * are not atomic read-modify-writes (docs/architecture.md, "Decisions, and why"). No correctness may rest on a MongoDB
 * read-modify-write; use a unique index, an immutable insert, Temporal's one-command-at-a-time, or Redis, as here.
 *
 * Each organisation has a sorted set of slots, one per deployment that counts: the score is +inf once the deployment's
 * workflow start is confirmed, else the end of a lease (ms). Taking a slot is one Lua script (check the size, add), so
 * a burst of any size admits exactly the quota. MongoDB stays the record of truth, and the slots are reconciled against
 * it without ever taking part in the admission:
 * - pruning, when a deploy finds the set full: slots whose record is destroyed, failed or (lease over) absent go,
 * and an unconfirmed slot whose lease ran out goes unless Temporal has its workflow. Pruning only removes (and only a
 * slot still as it was read), so it can free room but never admit past the quota. This is how a destroyed or failed
 * deployment gives its slot back: the worker and the destroy path need not know slots exist.
 * - syncing, when the organisation's sync marker is missing (a Redis that lost its data, or every QUOTA_RESYNC_S):
 * every live record of MongoDB is added if absent; a `queued` one unconfirmed, so pruning asks Temporal about it.
 * Syncing only adds, pruning only removes; both converge on MongoDB's view.
 */

// KEYS: slots, sync marker. ARGV: deployment ID, quota, lease end (ms). → {1 admitted | 0 full | -1 not synced, held}
// A slot the ID already holds is its own (a retried request): its lease is extended, a confirmed slot stays so.
const ACQUIRE = `
if redis.call('exists', KEYS[2]) == 0 then return {-1, 0} end
local held = redis.call('zcard', KEYS[1])
if redis.call('zscore', KEYS[1], ARGV[1]) then
  redis.call('zadd', KEYS[1], 'GT', ARGV[3], ARGV[1])
  return {1, held}
end
if held >= tonumber(ARGV[2]) then return {0, held} end
redis.call('zadd', KEYS[1], ARGV[3], ARGV[1])
return {1, held + 1}`;

// KEYS: slots, sync marker. ARGV: marker TTL (s), then score, ID pairs. Adds only what is absent.
const SYNC = `
for i = 2, #ARGV, 2 do redis.call('zadd', KEYS[1], 'NX', ARGV[i], ARGV[i + 1]) end
redis.call('set', KEYS[2], '1', 'EX', ARGV[1])
return 1`;

// KEYS: slots. ARGV: ID, score-as-read pairs. Removes a slot only if nobody changed it since it was read.
const REMOVE_UNCHANGED = `
local removed = 0
for i = 1, #ARGV, 2 do
  if redis.call('zscore', KEYS[1], ARGV[i]) == ARGV[i + 1] then
    redis.call('zrem', KEYS[1], ARGV[i])
    removed = removed + 1
  end
end
return removed`;

const CONFIRMED = 'inf';
const UNCONFIRMED = '0';

/** What the quota needs to know of deployments: MongoDB's view, and whether Temporal has a workflow. */
export interface QuotaRecords {
  /** Records that count against the quota: not destroyed, not failed. */
  live(orgId: string): Promise<Pick<DeploymentRecord, '_id' | 'status'>[]>;
  /** The records of these IDs, whatever their state; an ID without a record is absent from the answer. */
  states(orgId: string, ids: string[]): Promise<Pick<DeploymentRecord, '_id' | 'status' | 'destroyedAt'>[]>;
  workflowStarted(deploymentId: string): Promise<boolean>;
}

/** MongoDB reads only (projections of the deployments collection) and one Temporal describe. */
export function quotaRecords(db: Db, temporal: Client): QuotaRecords {
  const col = db.collection<DeploymentRecord>('deployments');
  return {
    live: (orgId) =>
      guard('quota.live', () =>
        col
          .find(
            { orgId, destroyedAt: { $exists: false }, status: { $ne: 'failed' } },
            { projection: { _id: 1, status: 1 } },
          )
          .toArray(),
      ),
    states: (orgId, ids) =>
      guard('quota.states', () =>
        col.find({ orgId, _id: { $in: ids } }, { projection: { _id: 1, status: 1, destroyedAt: 1 } }).toArray(),
      ),
    async workflowStarted(deploymentId) {
      try {
        await temporal.workflow.getHandle(deploymentWorkflowId(deploymentId)).describe();
        return true;
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) return false;
        throw err;
      }
    },
  };
}

export interface QuotaDeps {
  redis: Redis;
  keyPrefix: string;
  records: QuotaRecords;
  leaseS: number;
  resyncS: number;
}

export function createQuota(deps: QuotaDeps) {
  const { redis } = deps;
  const keys = (orgId: string) => {
    // One hash tag per organisation keeps both keys in one slot of a Redis Cluster, as a script needs.
    const base = `${deps.keyPrefix}quota:{${orgId}}`;
    return [`${base}:slots`, `${base}:synced`] as const;
  };
  /** One sync or prune per organisation at a time in this process: a refused burst asks MongoDB once, not 200 times. */
  const inFlight = new Map<string, Promise<void>>();
  const once = (key: string, work: () => Promise<void>) => {
    let p = inFlight.get(key);
    if (!p) {
      p = work().finally(() => inFlight.delete(key));
      inFlight.set(key, p);
    }
    return p;
  };

  async function sync(orgId: string) {
    const [slots, marker] = keys(orgId);
    const live = await deps.records.live(orgId);
    // Past `queued` the workflow has run, so it exists; a queued record may never have started: pruning asks.
    const pairs = live.flatMap((r) => [r.status === 'queued' ? UNCONFIRMED : CONFIRMED, r._id]);
    await redis.eval(SYNC, 2, slots, marker, String(deps.resyncS), ...pairs);
  }

  async function prune(orgId: string) {
    const [slots] = keys(orgId);
    const flat = await redis.zrange(slots, 0, -1, 'WITHSCORES');
    const held: { id: string; score: string }[] = [];
    for (let i = 0; i < flat.length; i += 2) held.push({ id: flat[i]!, score: flat[i + 1]! });
    if (held.length === 0) return;
    const records = new Map(
      (
        await deps.records.states(
          orgId,
          held.map((s) => s.id),
        )
      ).map((r) => [r._id, r]),
    );
    const now = Date.now();
    const gone: string[] = [];
    const confirm: string[] = [];
    for (const { id, score } of held) {
      const record = records.get(id);
      const leaseOver = score !== CONFIRMED && Number(score) <= now;
      if (record && (record.destroyedAt || record.status === 'failed')) gone.push(id, score);
      else if (!record && (score === CONFIRMED || leaseOver)) gone.push(id, score);
      else if (record && leaseOver) {
        if (await deps.records.workflowStarted(id)) confirm.push(id);
        else gone.push(id, score);
      }
    }
    if (gone.length) await redis.eval(REMOVE_UNCHANGED, 1, slots, ...gone);
    for (const id of confirm) await redis.zadd(slots, 'XX', CONFIRMED, id);
  }

  return {
    /**
     * Takes a slot for the deployment if the organisation holds fewer than `quota`; the same ID holds at most one.
     * Returns whether it was admitted and how many slots the organisation holds.
     */
    async acquire(orgId: string, deploymentId: string, quota: number): Promise<{ admitted: boolean; held: number }> {
      const [slots, marker] = keys(orgId);
      let pruned = false;
      for (let attempt = 0; attempt < 4; attempt++) {
        const leaseEnd = String(Date.now() + deps.leaseS * 1000);
        const [status, held] = (await redis.eval(ACQUIRE, 2, slots, marker, deploymentId, String(quota), leaseEnd)) as [
          number,
          number,
        ];
        if (status === 1) return { admitted: true, held };
        if (status === -1) await once(`sync:${orgId}`, () => sync(orgId));
        else if (pruned) return { admitted: false, held };
        else {
          await once(`prune:${orgId}`, () => prune(orgId));
          pruned = true;
        }
      }
      throw new Error(`quota of organisation ${orgId}: its slots could not be synced from MongoDB`);
    },

    /**
     * The workflow has started: the slot holds until the deployment is destroyed or fails. Needed for speed only:
     * a lapsed lease whose workflow exists is confirmed by pruning too.
     */
    async confirm(orgId: string, deploymentId: string): Promise<void> {
      await redis.zadd(keys(orgId)[0], 'XX', CONFIRMED, deploymentId);
    },
  };
}

export type Quota = ReturnType<typeof createQuota>;
