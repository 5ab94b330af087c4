import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { BackupRecord, BackupStatus, BackupTrigger, DatabaseRecord, DatabaseStatus } from './types';

/**
 * Databases' and backups' records. A name is unique where it is used (its deployment, or the organisation for managed
 * databases) by a unique index on `nameKey`; a deleted database's record is removed, so its name is free again. The
 * status of each record is written only by the one workflow that owns it (the database's, or the backup's), each write
 * whole: no read-modify-write, which FerretDB does not make atomic.
 */
export function createDatabaseStore(db: Db) {
  const databases = db.collection<DatabaseRecord>('databases');
  const backups = db.collection<BackupRecord>('database_backups');

  return {
    async ensureIndexes() {
      // One index per command: FerretDB drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('databases.createIndexes', async () => {
        await databases.createIndex({ nameKey: 1 }, { unique: true });
        await databases.createIndex({ orgId: 1, deploymentId: 1 });
        await databases.createIndex({ orgId: 1, projectId: 1 });
        await backups.createIndex({ orgId: 1, databaseId: 1, createdAt: -1 });
      });
    },

    /** A duplicate nameKey throws the driver's 11000 inside a DatabaseError. */
    insert: (d: DatabaseRecord) => guard('databases.insert', () => databases.insertOne(d)),

    /** The org's database, or null: another organisation's reads as absent. */
    get: (orgId: string, id: string) => guard('databases.get', () => databases.findOne({ _id: id, orgId })),

    /** By ID alone: for workflows, which were started for this database by the api. */
    getAny: (id: string) => guard('databases.getAny', () => databases.findOne({ _id: id })),

    /**
     * By name. `deploymentId` narrows to one deployment's services, `kind` to one kind, `visibleProjects` to the
     * organisation's own and those projects'.
     */
    async list(
      orgId: string,
      q: {
        limit: number;
        offset: number;
        kind?: DatabaseRecord['kind'];
        deploymentId?: string;
        projectId?: string;
        visibleProjects?: string[];
      },
    ) {
      const filter: Filter<DatabaseRecord> = { orgId };
      if (q.kind) filter.kind = q.kind;
      if (q.deploymentId) filter.deploymentId = q.deploymentId;
      if (q.projectId) filter.projectId = q.projectId;
      if (q.visibleProjects) filter.$or = [{ projectId: null }, { projectId: { $in: q.visibleProjects } }];
      const [items, total] = await Promise.all([
        guard('databases.list', () =>
          databases.find(filter).sort({ name: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('databases.count', () => databases.countDocuments(filter)),
      ]);
      return { items, total };
    },

    /** Every service of a deployment, for its destroy (which removes or keeps them). */
    ofDeploymentAny: (deploymentId: string) =>
      guard('databases.ofDeploymentAny', () => databases.find({ deploymentId }).toArray()),

    /** Count and total size of the organisation's databases, for its plan's limits. */
    async usage(orgId: string): Promise<{ count: number; totalGb: number }> {
      const items = await guard('databases.usage', () =>
        databases.find({ orgId }, { projection: { sizeGb: 1 } }).toArray(),
      );
      return { count: items.length, totalGb: items.reduce((n, d) => n + d.sizeGb, 0) };
    },

    /** The workflow's status write: the whole status and error, never computed from what was read. */
    async setStatus(id: string, status: DatabaseStatus, error: string | null = null): Promise<void> {
      await guard('databases.setStatus', () =>
        databases.updateOne({ _id: id }, { $set: { status, error, updatedAt: new Date() } }),
      );
    },

    /**
     * A service kept when its deployment is destroyed becomes a managed database of the deployment's project. Written
     * once, by the destroy, after the deployment is gone: nothing else writes these fields.
     */
    async keepAsManaged(id: string, nameKey: string): Promise<void> {
      await guard('databases.keepAsManaged', () =>
        databases.updateOne(
          { _id: id },
          { $set: { kind: 'managed', deploymentId: null, nameKey, updatedAt: new Date() } },
        ),
      );
    },

    /** Removes the record once its container and storage are gone; nothing to remove is success. */
    async remove(id: string): Promise<void> {
      await guard('databases.remove', () => databases.deleteOne({ _id: id }));
    },

    backups: {
      /** Inserted by the backup's workflow as it starts (running); the same ID again is the same backup. */
      insert: (b: BackupRecord) => guard('backups.insert', () => backups.insertOne(b)),
      get: (orgId: string, id: string) => guard('backups.get', () => backups.findOne({ _id: id, orgId })),
      getAny: (id: string) => guard('backups.getAny', () => backups.findOne({ _id: id })),
      /** Newest first; `triggers` narrows to backups or snapshots. */
      async list(
        orgId: string,
        databaseId: string,
        q: { limit: number; offset: number; triggers?: BackupTrigger[]; status?: BackupStatus },
      ) {
        const filter: Filter<BackupRecord> = { orgId, databaseId, status: { $ne: 'deleted' } };
        if (q.triggers) filter.trigger = { $in: q.triggers };
        if (q.status) filter.status = q.status;
        const [items, total] = await Promise.all([
          guard('backups.list', () =>
            backups.find(filter).sort({ createdAt: -1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
          ),
          guard('backups.count', () => backups.countDocuments(filter)),
        ]);
        return { items, total };
      },
      /** Complete backups of a database, newest first: what retention decides over. */
      complete: (databaseId: string) =>
        guard('backups.complete', () =>
          backups.find({ databaseId, status: 'complete' }).sort({ createdAt: -1, _id: 1 }).toArray(),
        ),
      /** The workflow's write: whole, never computed from what was read. */
      async finish(
        id: string,
        change:
          | { status: 'complete'; sizeBytes: number; sha256: string }
          | { status: 'failed'; error: string }
          | { status: 'deleted' },
      ): Promise<void> {
        const set =
          change.status === 'complete'
            ? { status: change.status, sizeBytes: change.sizeBytes, sha256: change.sha256, completedAt: new Date() }
            : change.status === 'failed'
              ? { status: change.status, error: change.error, completedAt: new Date() }
              : { status: change.status };
        await guard('backups.finish', () => backups.updateOne({ _id: id }, { $set: set }));
      },
      /** Bytes the organisation's complete backups and snapshots hold, for usage. */
      async bytes(orgId: string): Promise<number> {
        const items = await guard('backups.bytes', () =>
          backups.find({ orgId, status: 'complete' }, { projection: { sizeBytes: 1 } }).toArray(),
        );
        return items.reduce((n, b) => n + (b.sizeBytes ?? 0), 0);
      },
    },
  };
}

export type DatabaseStore = ReturnType<typeof createDatabaseStore>;
