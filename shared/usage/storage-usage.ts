import type { BucketUsageSample } from './bucket-usage';
import { byteHours, type StorageKind, type StorageLedgerEntry } from './storage-ledger';

const HOUR_MS = 3_600_000;

export type StoredKind = StorageKind | 'bucket';

export interface StoredByteHours {
  kind: StoredKind;
  projectId: string | null;
  resourceId: string;
  byteHours: number;
}

/**
 * A bucket's bytes over [from, to): each sample holds from its time until the bucket's next sample (a deleted bucket's
 * last one is empty), the last one until `to`; the last sample before `from` holds from `from`. A bucket never
 * measured counts nothing: its size is only known once listed.
 */
export function bucketByteHours(samples: readonly BucketUsageSample[], from: Date, to: Date): StoredByteHours[] {
  const byBucket = new Map<string, BucketUsageSample[]>();
  for (const s of samples) byBucket.set(s.bucketId, [...(byBucket.get(s.bucketId) ?? []), s]);
  const out: StoredByteHours[] = [];
  for (const [bucketId, list] of byBucket) {
    list.sort((a, b) => a.at.getTime() - b.at.getTime() || (a._id < b._id ? -1 : 1));
    let total = 0;
    list.forEach((s, i) => {
      const since = Math.max(s.at.getTime(), from.getTime());
      const until = Math.min(list[i + 1]?.at.getTime() ?? Infinity, to.getTime());
      if (until > since) total += (s.bytes * (until - since)) / HOUR_MS;
    });
    if (total > 0) out.push({ kind: 'bucket', projectId: list[0]!.projectId, resourceId: bucketId, byteHours: total });
  }
  return out;
}

/** Everything that held bytes over [from, to), as byte-hours: the ledger's volumes, databases and backups, and buckets. */
export function storedByteHours(
  ledger: readonly StorageLedgerEntry[],
  buckets: readonly BucketUsageSample[],
  from: Date,
  to: Date,
): StoredByteHours[] {
  return [
    ...byteHours(ledger, from, to).map((r) => ({
      kind: r.kind,
      projectId: r.projectId,
      resourceId: r.resourceId,
      byteHours: r.byteHours,
    })),
    ...bucketByteHours(buckets, from, to),
  ];
}
