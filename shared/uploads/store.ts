import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';

export interface UploadRecord {
  _id: string;
  orgId: string;
  filename: string;
  size: number;
  sha256: string;
  /** Object key in the S3 bucket. */
  key: string;
  createdAt: Date;
  expiresAt: Date;
}

export function createUploadStore(db: Db) {
  const col = db.collection<UploadRecord>('uploads');
  return {
    ensureIndexes: () =>
      ensureIndexesWithRetry('uploads.createIndexes', async () => {
        await col.createIndex({ orgId: 1, createdAt: -1 });
        await col.createIndex({ expiresAt: 1 });
      }),
    insert: (u: UploadRecord) => guard('uploads.insert', () => col.insertOne(u)),
    /** An unexpired upload of the org; another org's or an expired one reads as absent. */
    get: (orgId: string, id: string, now = new Date()) =>
      guard('uploads.get', () => col.findOne({ _id: id, orgId, expiresAt: { $gt: now } })),
    /** The oldest expired uploads, for the expiry schedule to delete. */
    expired: (now: Date, limit: number) =>
      guard('uploads.expired', () =>
        col
          .find({ expiresAt: { $lte: now } })
          .sort({ expiresAt: 1 })
          .limit(limit)
          .toArray(),
      ),
    remove: (id: string) => guard('uploads.remove', () => col.deleteOne({ _id: id })),
  };
}

export type UploadStore = ReturnType<typeof createUploadStore>;
