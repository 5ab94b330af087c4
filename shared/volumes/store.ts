import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { VolumeRecord, VolumeStatus } from './types';

/**
 * Volumes' records. One name per organisation rests on a unique index (a duplicate surfaces as the driver's 11000
 * inside a DatabaseError, which the api turns into CONFLICT). Status is written only by the volume's workflow, one
 * write at a time, each whole: no read-modify-write, which FerretDB does not make atomic. A deleted volume's record
 * is removed, so its name is free again.
 */
export function createVolumeStore(db: Db) {
  const volumes = db.collection<VolumeRecord>('volumes');

  return {
    async ensureIndexes() {
      // One index per command: FerretDB drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('volumes.createIndexes', async () => {
        await volumes.createIndex({ orgId: 1, name: 1 }, { unique: true });
        await volumes.createIndex({ orgId: 1, projectId: 1 });
      });
    },

    /** A duplicate (orgId, name) throws the driver's 11000 inside a DatabaseError. */
    insert: (v: VolumeRecord) => guard('volumes.insert', () => volumes.insertOne(v)),

    /** The org's volume, or null: another organisation's volume reads as absent. */
    get: (orgId: string, volumeId: string) => guard('volumes.get', () => volumes.findOne({ _id: volumeId, orgId })),

    /** By ID alone: for the volume's workflow, which the api started for this volume. */
    getAny: (volumeId: string) => guard('volumes.getAny', () => volumes.findOne({ _id: volumeId })),

    /**
     * By name; `projectId` narrows the list to that project's volumes, `visibleProjects` to the organisation's own
     * and those projects' (a caller below org admin sees the projects it belongs to).
     */
    async list(orgId: string, q: { limit: number; offset: number; projectId?: string; visibleProjects?: string[] }) {
      const filter: Filter<VolumeRecord> = { orgId };
      if (q.projectId) filter.projectId = q.projectId;
      if (q.visibleProjects) filter.$or = [{ projectId: null }, { projectId: { $in: q.visibleProjects } }];
      const [items, total] = await Promise.all([
        guard('volumes.list', () =>
          volumes.find(filter).sort({ name: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('volumes.count', () => volumes.countDocuments(filter)),
      ]);
      return { items, total };
    },

    /** Count and total size of the organisation's volumes, for its plan's limits. */
    async usage(orgId: string): Promise<{ count: number; totalGb: number }> {
      const items = await guard('volumes.usage', () =>
        volumes.find({ orgId }, { projection: { sizeGb: 1 } }).toArray(),
      );
      return { count: items.length, totalGb: items.reduce((n, v) => n + v.sizeGb, 0) };
    },

    /** The workflow's status write: the whole status and error, never computed from what was read. */
    async setStatus(volumeId: string, status: VolumeStatus, error: string | null = null): Promise<void> {
      await guard('volumes.setStatus', () =>
        volumes.updateOne({ _id: volumeId }, { $set: { status, error, updatedAt: new Date() } }),
      );
    },

    /** Removes the record once the storage is gone; nothing to remove is success. */
    async remove(volumeId: string): Promise<void> {
      await guard('volumes.remove', () => volumes.deleteOne({ _id: volumeId }));
    },
  };
}

export type VolumeStore = ReturnType<typeof createVolumeStore>;
