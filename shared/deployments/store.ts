import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';
import { createAttachmentStore } from './attachments';
import { createMetricsStore } from './metrics-store';
import { createReleaseStore } from './releases-store';
import type { DeploymentFailure, DeploymentRecord, DeploymentStatus, DestroyIntent, Provider } from './types';

export interface StatusChange {
  deploymentId: string;
  /** The workflow's own step counter: a write with a version already reached is a retry and changes nothing. */
  version: number;
  status: DeploymentStatus;
  message: string;
  url?: string | null;
  error?: DeploymentFailure | null;
  container?: DeploymentRecord['container'] | null;
  /**
   * The serving release and what it runs (entity commands, docs/architecture.md, "A deployment's lifecycle, as
   * workflows").
   */
  revision?: number;
  replicas?: number;
  instances?: DeploymentRecord['instances'] | null;
  lastFailure?: DeploymentRecord['lastFailure'] | null;
  /** The serving release's environment, names and sealed values (set by the activity, never from history). */
  envNames?: string[];
  envSealed?: DeploymentRecord['envSealed'] | null;
}

export function createDeploymentStore(db: Db) {
  const col = db.collection<DeploymentRecord>('deployments');
  const intents = db.collection<DestroyIntent>('deployment_destroys');
  const live = { destroyedAt: { $exists: false } } as const;

  /** The reconciler's hide, for a destroy whose api stopped between writing the intent and hiding the record. */
  async function markDestroyedById(id: string): Promise<boolean> {
    const now = new Date();
    const result = await guard('deployments.markDestroyedById', () =>
      col.updateOne({ _id: id, ...live }, { $set: { destroyedAt: now, updatedAt: now } }),
    );
    return result.modifiedCount === 1;
  }

  return {
    /** The deployments' releases live beside them: whoever holds the deployments holds their history. */
    releases: createReleaseStore(db),
    /** Resource-use samples of their instances (metrics history), recorded by the worker's schedule. */
    metrics: createMetricsStore(db),
    /** Volumes mounted into it and environment references: the deployment's, not its code's (attachments.ts). */
    attachments: createAttachmentStore(db),

    async ensureIndexes() {
      // One index per command: FerretDB 1.24 drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('deployments.createIndexes', async () => {
        await col.createIndex({ orgId: 1, origin: 1, createdAt: -1 });
        await col.createIndex({ orgId: 1, status: 1 });
        await intents.createIndex({ requestedAt: 1 });
      });
      await this.releases.ensureIndexes();
      await this.metrics.ensureIndexes();
      await this.attachments.ensureIndexes();
    },

    /**
     * Inserts the queued record; a duplicate `_id` (same org + idempotency key) throws the driver's 11000 inside a
     * DatabaseError.
     */
    async insert(record: DeploymentRecord) {
      await guard('deployments.insert', () => col.insertOne(record));
    },

    /** Deployments that count against the plan quota: not destroyed and not failed. */
    async countLive(orgId: string): Promise<number> {
      return guard('deployments.countLive', () => col.countDocuments({ orgId, ...live, status: { $ne: 'failed' } }));
    },

    async findAny(id: string) {
      return guard('deployments.findAny', () => col.findOne({ _id: id }));
    },

    /** A live deployment of the org; another org's or a destroyed one reads as absent. */
    async get(orgId: string, id: string) {
      return guard('deployments.get', () => col.findOne({ _id: id, orgId, ...live }));
    },

    async list(q: {
      orgId: string;
      origin?: DeploymentRecord['origin'];
      status?: DeploymentStatus;
      provider?: Provider;
      projectId?: string;
      /** Only deployments of no project or of these projects (a caller below org admin: its projects). */
      visibleProjects?: string[];
      limit: number;
      offset: number;
    }) {
      const filter: Filter<DeploymentRecord> = { orgId: q.orgId, ...live };
      if (q.origin) filter.origin = q.origin;
      if (q.status) filter.status = q.status;
      if (q.provider) filter.provider = q.provider;
      if (q.projectId) filter.projectId = q.projectId;
      if (q.visibleProjects)
        filter.$or = [{ projectId: { $exists: false } }, { projectId: { $in: q.visibleProjects } }];
      const [items, total] = await Promise.all([
        guard('deployments.list', () =>
          col.find(filter).sort({ createdAt: -1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('deployments.count', () => col.countDocuments(filter)),
      ]);
      return { items, total };
    },

    async recordStatus(change: StatusChange): Promise<boolean> {
      const now = new Date();
      const set: Partial<DeploymentRecord> = { status: change.status, version: change.version, updatedAt: now };
      const unset: Record<string, ''> = {};
      for (const key of [
        'url',
        'error',
        'container',
        'revision',
        'replicas',
        'instances',
        'lastFailure',
        'envNames',
        'envSealed',
      ] as const) {
        const value = change[key];
        if (value === null) unset[key] = '';
        else if (value !== undefined) Object.assign(set, { [key]: value });
      }
      const result = await guard('deployments.recordStatus', () =>
        col.updateOne(
          { _id: change.deploymentId, version: { $lt: change.version } },
          {
            $set: set,
            ...(Object.keys(unset).length ? { $unset: unset } : {}),
            $push: { events: { status: change.status, message: change.message, at: now } },
          },
        ),
      );
      if (result.modifiedCount !== 1) return false;
      // FerretDB writes the whole document back: a destroy's hide written between this update's read and its write
      // is lost, and the deployment would read as live (followers never told) until the reconciler. Its intent is an
      // insert, written before the hide, so it is there by now: hide again from it.
      const destroying = await guard('deployments.destroyIntentOf', () =>
        intents.findOne({ _id: change.deploymentId }, { projection: { _id: 1 } }),
      );
      if (destroying) await markDestroyedById(change.deploymentId);
      return true;
    },

    /** The destroy's intent, once one was written. */
    destroyIntent: (deploymentId: string) =>
      guard('deployments.destroyIntent', () => intents.findOne({ _id: deploymentId })),

    /**
     * Writes a destroy's intent before the record is hidden: an insert, never an update, so it needs no atomic
     * read-modify-write. A second destroy of the same deployment finds it there and changes nothing (false).
     */
    async recordDestroyIntent(intent: DestroyIntent): Promise<boolean> {
      try {
        await guard('deployments.recordDestroyIntent', () => intents.insertOne(intent));
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    },

    /**
     * Hides the records of intents written since `since` that are still visible: an api that stopped between the
     * intent and the hide left them so. Returns their IDs; the reconciler then tells their workflows.
     */
    async finishDestroyIntents(since: Date): Promise<string[]> {
      const asked = await guard('deployments.destroyIntentsSince', () =>
        intents.find({ requestedAt: { $gte: since } }, { projection: { _id: 1 } }).toArray(),
      );
      if (asked.length === 0) return [];
      const visible = await guard('deployments.visibleAmong', () =>
        col.find({ _id: { $in: asked.map((i) => i._id) }, ...live }, { projection: { _id: 1 } }).toArray(),
      );
      const hidden: string[] = [];
      for (const { _id } of visible) if (await markDestroyedById(_id)) hidden.push(_id);
      return hidden;
    },

    /** Records written before env values were sealed: they still hold them in the clear. */
    async withPlainEnv(limit: number) {
      return guard('deployments.withPlainEnv', () =>
        col
          .find({ envVars: { $exists: true } }, { projection: { _id: 1, orgId: 1, envVars: 1 } })
          .limit(limit)
          .toArray(),
      );
    },

    /**
     * Replaces a record's clear values by their sealed form. The values never change after the insert, so a
     * concurrent sealing of the same record writes an equivalent result: no read-modify-write hazard.
     */
    async sealEnv(id: string, envNames: string[], envSealed: DeploymentRecord['envSealed']) {
      await guard('deployments.sealEnv', () =>
        col.updateOne(
          { _id: id, envVars: { $exists: true } },
          { $set: { envNames, ...(envSealed ? { envSealed } : {}) }, $unset: { envVars: '' } },
        ),
      );
    },

    /** Which of these deployments are destroyed, asked to be, or unknown, as the reconciler judges engine objects. */
    async lifecycle(ids: string[]): Promise<Map<string, 'live' | 'destroyed'>> {
      const [records, asked] = await Promise.all([
        guard('deployments.lifecycle', () =>
          col.find({ _id: { $in: ids } }, { projection: { _id: 1, destroyedAt: 1 } }).toArray(),
        ),
        guard('deployments.lifecycleIntents', () =>
          intents.find({ _id: { $in: ids } }, { projection: { _id: 1 } }).toArray(),
        ),
      ]);
      const destroyed = new Set(asked.map((i) => i._id));
      return new Map(records.map((r) => [r._id, r.destroyedAt || destroyed.has(r._id) ? 'destroyed' : 'live']));
    },

    /** What the router needs of these live deployments (the reconciler's route restore): name, status, revision. */
    async routing(ids: string[]): Promise<Pick<DeploymentRecord, '_id' | 'name' | 'status' | 'revision'>[]> {
      return guard('deployments.routing', () =>
        col.find({ _id: { $in: ids }, ...live }, { projection: { _id: 1, name: 1, status: 1, revision: 1 } }).toArray(),
      );
    },

    /** Hides the deployment from every read at once; the record stays for audit. */
    async markDestroyed(orgId: string, id: string): Promise<boolean> {
      const now = new Date();
      const result = await guard('deployments.markDestroyed', () =>
        col.updateOne({ _id: id, orgId, ...live }, { $set: { destroyedAt: now, updatedAt: now } }),
      );
      return result.modifiedCount === 1;
    },
  };
}

export type DeploymentStore = ReturnType<typeof createDeploymentStore>;
