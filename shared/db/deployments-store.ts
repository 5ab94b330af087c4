import type { Db, Filter } from 'mongodb';

import type { DeploymentFailure, DeploymentRecord, DeploymentStatus, Provider } from '../deployments';
import { ensureIndexesWithRetry, guard } from './mongo';

export interface StatusChange {
  deploymentId: string;
  /** The workflow's own step counter: a write with a version already reached is a retry and changes nothing. */
  version: number;
  status: DeploymentStatus;
  message: string;
  url?: string | null;
  error?: DeploymentFailure | null;
  container?: DeploymentRecord['container'] | null;
}

export function createDeploymentStore(db: Db) {
  const col = db.collection<DeploymentRecord>('deployments');
  const live = { destroyedAt: { $exists: false } } as const;

  return {
    async ensureIndexes() {
      // One index per command: FerretDB 1.24 drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('deployments.createIndexes', async () => {
        await col.createIndex({ orgId: 1, origin: 1, createdAt: -1 });
        await col.createIndex({ orgId: 1, status: 1 });
      });
    },

    /** Inserts the queued record; a duplicate `_id` (same org + requestId) throws the driver's 11000 inside a DatabaseError. */
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
      limit: number;
      offset: number;
    }) {
      const filter: Filter<DeploymentRecord> = { orgId: q.orgId, ...live };
      if (q.origin) filter.origin = q.origin;
      if (q.status) filter.status = q.status;
      if (q.provider) filter.provider = q.provider;
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
      for (const key of ['url', 'error', 'container'] as const) {
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
      return result.modifiedCount === 1;
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
