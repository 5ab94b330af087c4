import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { GitBindingRecord, GitConnectionRecord, GitDeliveryRecord } from './types';

/**
 * Git connections, bindings and deliveries. Records are inserted whole and removed; a delivery's outcome is set once
 * on the record its insert made. Deduplication rests on the unique (bindingId, key) index, never on a read first
 * (FerretDB does not make a read-then-write atomic).
 */
export function createGitBindingStore(db: Db) {
  const connections = db.collection<GitConnectionRecord>('git_connections');
  const bindings = db.collection<GitBindingRecord>('git_bindings');
  const deliveries = db.collection<GitDeliveryRecord>('git_deliveries');

  return {
    async ensureIndexes() {
      // One index per command: FerretDB drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('git.createIndexes', async () => {
        await connections.createIndex({ orgId: 1, createdAt: 1 });
        await bindings.createIndex({ orgId: 1, createdAt: 1 });
        await bindings.createIndex({ connectionId: 1 });
        await deliveries.createIndex({ bindingId: 1, key: 1 }, { unique: true });
        await deliveries.createIndex({ bindingId: 1, receivedAt: -1 });
      });
    },

    connections: {
      insert: (c: GitConnectionRecord) => guard('gitConnections.insert', () => connections.insertOne(c)),
      get: (orgId: string, id: string) => guard('gitConnections.get', () => connections.findOne({ _id: id, orgId })),
      async list(orgId: string, q: { limit: number; offset: number }) {
        const [items, total] = await Promise.all([
          guard('gitConnections.list', () =>
            connections.find({ orgId }).sort({ createdAt: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
          ),
          guard('gitConnections.count', () => connections.countDocuments({ orgId })),
        ]);
        return { items, total };
      },
      count: (orgId: string) => guard('gitConnections.countOfOrg', () => connections.countDocuments({ orgId })),
      async remove(id: string): Promise<void> {
        await guard('gitConnections.remove', () => connections.deleteOne({ _id: id }));
      },
    },

    bindings: {
      insert: (b: GitBindingRecord) => guard('gitBindings.insert', () => bindings.insertOne(b)),
      get: (orgId: string, id: string) => guard('gitBindings.get', () => bindings.findOne({ _id: id, orgId })),
      /** By ID alone: for the hooks origin, which knows no organisation until the binding names one. */
      getAny: (id: string) => guard('gitBindings.getAny', () => bindings.findOne({ _id: id })),
      async list(orgId: string, q: { limit: number; offset: number; projectId?: string; visibleProjects?: string[] }) {
        const filter: Filter<GitBindingRecord> = { orgId };
        if (q.projectId) filter.projectId = q.projectId;
        if (q.visibleProjects) filter.$or = [{ projectId: null }, { projectId: { $in: q.visibleProjects } }];
        const [items, total] = await Promise.all([
          guard('gitBindings.list', () =>
            bindings.find(filter).sort({ createdAt: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
          ),
          guard('gitBindings.count', () => bindings.countDocuments(filter)),
        ]);
        return { items, total };
      },
      count: (orgId: string) => guard('gitBindings.countOfOrg', () => bindings.countDocuments({ orgId })),
      usingConnection: (connectionId: string) =>
        guard('gitBindings.usingConnection', () => bindings.countDocuments({ connectionId })),
      async remove(id: string): Promise<void> {
        await guard('gitBindings.remove', () => bindings.deleteOne({ _id: id }));
      },
    },

    deliveries: {
      /** A second delivery of the same (bindingId, key) throws the driver's 11000 inside a DatabaseError. */
      insert: (d: GitDeliveryRecord) => guard('gitDeliveries.insert', () => deliveries.insertOne(d)),
      async settle(id: string, outcome: Pick<GitDeliveryRecord, 'outcome' | 'reason' | 'releases'>): Promise<void> {
        await guard('gitDeliveries.settle', () => deliveries.updateOne({ _id: id }, { $set: outcome }));
      },
      /** Newest first. */
      async list(bindingId: string, q: { limit: number; offset: number }) {
        const [items, total] = await Promise.all([
          guard('gitDeliveries.list', () =>
            deliveries.find({ bindingId }).sort({ receivedAt: -1, _id: -1 }).skip(q.offset).limit(q.limit).toArray(),
          ),
          guard('gitDeliveries.count', () => deliveries.countDocuments({ bindingId })),
        ]);
        return { items, total };
      },
      async removeOfBinding(bindingId: string): Promise<void> {
        await guard('gitDeliveries.removeOfBinding', () => deliveries.deleteMany({ bindingId }));
      },
    },
  };
}

export type GitBindingStore = ReturnType<typeof createGitBindingStore>;
