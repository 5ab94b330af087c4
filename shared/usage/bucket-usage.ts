import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { Db } from 'mongodb';

import type { BucketRecord, BucketUsage } from '../buckets/types';
import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';

/**
 * What buckets hold, sampled: unlike a volume's, a bucket's size changes with every write, so the storage ledger's
 * start/end pairs cannot say it. Each measurement is an immutable entry of `bucket_usage`
 * (`<bucketId>:<measuredAt ms>`), kept after the bucket goes, so the usage feature can turn samples into byte-hours
 * later. A measurement is a listing of the bucket (what S3 offers everywhere), capped at LIST_CAP objects so a huge
 * bucket costs a bounded number of requests (then `partial`), and reused for CACHE_MS, so reads stay cheap.
 */
export interface BucketUsageSample {
  _id: string;
  orgId: string;
  projectId: string | null;
  bucketId: string;
  objects: number;
  bytes: number;
  partial: boolean;
  at: Date;
}

/** Ten listing pages at most. */
export const LIST_CAP = 10_000;
/** A sample this young answers a read as it is. */
export const CACHE_MS = 60_000;

export function createBucketUsage(db: Db, s3: S3Client) {
  const samples = db.collection<BucketUsageSample>('bucket_usage');

  async function measure(bucket: Pick<BucketRecord, 's3Name'>): Promise<Omit<BucketUsage, 'measuredAt'>> {
    let objects = 0;
    let bytes = 0;
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({ Bucket: bucket.s3Name, ContinuationToken: token, MaxKeys: 1000 }),
      );
      for (const o of page.Contents ?? []) {
        objects++;
        bytes += o.Size ?? 0;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token && objects < LIST_CAP);
    return { objects, bytes, partial: token !== undefined };
  }

  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('bucketUsage.createIndexes', async () => {
        await samples.createIndex({ bucketId: 1, at: -1 });
        await samples.createIndex({ orgId: 1, at: 1 });
      });
    },

    /** The newest sample when younger than CACHE_MS; otherwise a new measurement, recorded. */
    async current(bucket: BucketRecord, now = new Date()): Promise<BucketUsage> {
      const [last] = await guard('bucketUsage.latest', () =>
        samples.find({ bucketId: bucket._id }).sort({ at: -1 }).limit(1).toArray(),
      );
      if (last && now.getTime() - last.at.getTime() < CACHE_MS)
        return { objects: last.objects, bytes: last.bytes, partial: last.partial, measuredAt: last.at };
      const m = await measure(bucket);
      const sample: BucketUsageSample = {
        _id: `${bucket._id}:${now.getTime()}`,
        orgId: bucket.orgId,
        projectId: bucket.projectId,
        bucketId: bucket._id,
        ...m,
        at: now,
      };
      await guard('bucketUsage.insert', () => samples.insertOne(sample)).catch((err: unknown) => {
        // Another read measured at the same millisecond: its sample stands.
        if (!isDuplicateKey(err)) throw err;
      });
      return { ...m, measuredAt: now };
    },

    /**
     * The bucket holds nothing from `now`: recorded when it is deleted, so usage over a period stops counting its
     * last measured bytes there.
     */
    async emptied(bucket: Pick<BucketRecord, '_id' | 'orgId' | 'projectId'>, now = new Date()): Promise<void> {
      const sample: BucketUsageSample = {
        _id: `${bucket._id}:${now.getTime()}`,
        orgId: bucket.orgId,
        projectId: bucket.projectId,
        bucketId: bucket._id,
        objects: 0,
        bytes: 0,
        partial: false,
        at: now,
      };
      await guard('bucketUsage.emptied', () => samples.insertOne(sample)).catch((err: unknown) => {
        // A measurement at the same millisecond: the bucket was being emptied, and the next sample is none.
        if (!isDuplicateKey(err)) throw err;
      });
    },

    /**
     * The organisation's samples before `to`, oldest first: each holds until its bucket's next one, so a period's
     * bytes start from the last sample before it.
     */
    samplesBefore: (orgId: string, to: Date) =>
      guard('bucketUsage.samplesBefore', () =>
        samples
          .find({ orgId, at: { $lt: to } })
          .sort({ at: 1, _id: 1 })
          .toArray(),
      ),

    /** The organisation's samples in [from, to), oldest first: for usage over a period. */
    samplesBetween: (orgId: string, from: Date, to: Date) =>
      guard('bucketUsage.samplesBetween', () =>
        samples
          .find({ orgId, at: { $gte: from, $lt: to } })
          .sort({ at: 1, _id: 1 })
          .toArray(),
      ),
  };
}

export type BucketUsageStore = ReturnType<typeof createBucketUsage>;
