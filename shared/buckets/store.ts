import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { BucketCredentialRecord, BucketRecord } from './types';

/**
 * Buckets' and their keys' records. One label per organisation and one real bucket per store rest on unique indexes
 * (a duplicate surfaces as the driver's 11000 inside a DatabaseError); records are inserted whole and removed, never
 * updated, so nothing here is a read-modify-write (FerretDB does not make one atomic).
 */
export function createBucketStore(db: Db) {
  const buckets = db.collection<BucketRecord>('buckets');
  const credentials = db.collection<BucketCredentialRecord>('bucket_credentials');

  return {
    async ensureIndexes() {
      // One index per command: FerretDB drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('buckets.createIndexes', async () => {
        await buckets.createIndex({ orgId: 1, name: 1 }, { unique: true });
        await buckets.createIndex({ s3Name: 1 }, { unique: true });
        await buckets.createIndex({ orgId: 1, projectId: 1 });
        await credentials.createIndex({ bucketId: 1 });
        await credentials.createIndex({ deploymentId: 1 });
      });
    },

    /** A duplicate (orgId, name) or s3Name throws the driver's 11000 inside a DatabaseError. */
    insert: (b: BucketRecord) => guard('buckets.insert', () => buckets.insertOne(b)),

    /** The org's bucket, or null: another organisation's bucket reads as absent. */
    get: (orgId: string, id: string) => guard('buckets.get', () => buckets.findOne({ _id: id, orgId })),

    /** By ID alone: for the worker, which checks the organisation itself. */
    getAny: (id: string) => guard('buckets.getAny', () => buckets.findOne({ _id: id })),

    async list(orgId: string, q: { limit: number; offset: number; projectId?: string; visibleProjects?: string[] }) {
      const filter: Filter<BucketRecord> = { orgId };
      if (q.projectId) filter.projectId = q.projectId;
      if (q.visibleProjects) filter.$or = [{ projectId: null }, { projectId: { $in: q.visibleProjects } }];
      const [items, total] = await Promise.all([
        guard('buckets.list', () =>
          buckets.find(filter).sort({ name: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('buckets.count', () => buckets.countDocuments(filter)),
      ]);
      return { items, total };
    },

    count: (orgId: string) => guard('buckets.countOfOrg', () => buckets.countDocuments({ orgId })),

    async remove(id: string): Promise<void> {
      await guard('buckets.remove', () => buckets.deleteOne({ _id: id }));
    },

    credentials: {
      insert: (c: BucketCredentialRecord) => guard('bucketCredentials.insert', () => credentials.insertOne(c)),

      /** The bucket's key by access key ID, or null (a key of another bucket reads as absent). */
      get: (bucketId: string, accessKeyId: string) =>
        guard('bucketCredentials.get', () => credentials.findOne({ _id: accessKeyId, bucketId })),

      /** Oldest first. */
      ofBucket: (bucketId: string) =>
        guard('bucketCredentials.ofBucket', () =>
          credentials.find({ bucketId }).sort({ createdAt: 1, _id: 1 }).toArray(),
        ),

      /** The keys made for a deployment's links (of every bucket). */
      ofDeployment: (deploymentId: string) =>
        guard('bucketCredentials.ofDeployment', () => credentials.find({ deploymentId, kind: 'link' }).toArray()),

      async remove(accessKeyId: string): Promise<void> {
        await guard('bucketCredentials.remove', () => credentials.deleteOne({ _id: accessKeyId }));
      },
    },
  };
}

export type BucketStore = ReturnType<typeof createBucketStore>;
