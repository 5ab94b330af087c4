import type { Db } from 'mongodb';

import type { BackupRecord, DatabaseRecord } from '../databases/types';
import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';
import { GIB } from '../volumes/mount';
import type { VolumeRecord } from '../volumes/types';

/**
 * What holds bytes for an organisation: a volume, a database's storage, a backup's or snapshot's object. Their own
 * records are removed on delete (volumes, databases) or rewritten in place (backups), so they cannot say what was
 * stored last month; this ledger can (docs/architecture.md, "Storage usage ledger").
 */
export const STORAGE_KINDS = ['volume', 'database', 'backup'] as const;
export type StorageKind = (typeof STORAGE_KINDS)[number];

export type LedgerEdge = 'start' | 'end';

/**
 * One immutable entry: `start` once the storage exists, `end` once it is gone, at most one of each per resource, its
 * `_id` saying which (`<kind>:<resourceId>:start`), so a second insert of the same edge is the same entry.
 */
export interface StorageLedgerEntry {
  _id: `${StorageKind}:${string}:${LedgerEdge}`;
  orgId: string;
  projectId: string | null;
  kind: StorageKind;
  resourceId: string;
  /** What the resource holds: a volume's or database's size as allocated, a backup's object as uploaded. */
  bytes: number;
  at: Date;
}

export type LedgerFact = Omit<StorageLedgerEntry, '_id'>;

const HOUR_MS = 3_600_000;

type Sized = { _id: string; orgId: string; projectId: string | null; sizeGb: number };
const sized = (kind: StorageKind, r: Sized, at: Date): LedgerFact => ({
  orgId: r.orgId,
  projectId: r.projectId,
  kind,
  resourceId: r._id,
  bytes: r.sizeGb * GIB,
  at,
});

/** A volume holds its whole size from the moment it is ready: the image is allocated, whatever is written to it. */
export const volumeFact = (v: Pick<VolumeRecord, keyof Sized>, at: Date) => sized('volume', v, at);

/** A database's storage, allocated as a volume's is. */
export const databaseFact = (d: Pick<DatabaseRecord, keyof Sized>, at: Date) => sized('database', d, at);

/** A backup or snapshot holds what was uploaded. */
export const backupFact = (
  b: Pick<BackupRecord, '_id' | 'orgId' | 'projectId' | 'sizeBytes'>,
  at: Date,
): LedgerFact => ({
  orgId: b.orgId,
  projectId: b.projectId,
  kind: 'backup',
  resourceId: b._id,
  bytes: b.sizeBytes ?? 0,
  at,
});

/**
 * The append-only collection `storage_ledger`. Entries are inserted, never updated or removed: no read-modify-write
 * anywhere, and an activity retried after its insert landed finds the duplicate and calls that success.
 */
export function createStorageLedger(db: Db) {
  const entries = db.collection<StorageLedgerEntry>('storage_ledger');

  async function insert(edge: LedgerEdge, fact: LedgerFact): Promise<void> {
    const entry: StorageLedgerEntry = { _id: `${fact.kind}:${fact.resourceId}:${edge}`, ...fact };
    await guard('storageLedger.insert', () => entries.insertOne(entry)).catch((err: unknown) => {
      // Written by an earlier attempt of the same step: the entry stands as first written.
      if (!isDuplicateKey(err)) throw err;
    });
  }

  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('storageLedger.createIndexes', () => entries.createIndex({ orgId: 1, at: 1 }));
    },

    /** The storage exists from `at`. */
    started: (fact: LedgerFact) => insert('start', fact),

    /** The storage is gone from `at`. */
    ended: (fact: LedgerFact) => insert('end', fact),

    /**
     * Every entry of the organisation's resources that held storage at some time in [from, to): started before `to`
     * and not ended by `from`. Entries dated `to` or later are left out, so the answer for a past period stays the same
     * however much later it is asked.
     */
    async entriesOverlapping(orgId: string, from: Date, to: Date): Promise<StorageLedgerEntry[]> {
      const before = await guard('storageLedger.entriesOverlapping', () =>
        entries
          .find({ orgId, at: { $lt: to } })
          .sort({ at: 1, _id: 1 })
          .toArray(),
      );
      const endedEarly = new Set(
        before.filter((e) => e._id.endsWith(':end') && e.at <= from).map((e) => `${e.kind}:${e.resourceId}`),
      );
      return before.filter((e) => !endedEarly.has(`${e.kind}:${e.resourceId}`));
    },
  };
}

export type StorageLedger = ReturnType<typeof createStorageLedger>;

export interface ResourceByteHours {
  orgId: string;
  projectId: string | null;
  kind: StorageKind;
  resourceId: string;
  bytes: number;
  /** Bytes held × hours held within the period. */
  byteHours: number;
}

/**
 * Byte-hours per resource over [from, to) (instants, so UTC whatever the caller's zone): a resource counts from its
 * start (or `from`) to its end (or `to`). A resource with no start in the entries was never counted as existing (it
 * failed before it held anything, or predates the ledger) and is left out; so is one that did not exist in the period.
 */
export function byteHours(entries: readonly StorageLedgerEntry[], from: Date, to: Date): ResourceByteHours[] {
  const edges = new Map<string, { start?: StorageLedgerEntry; end?: StorageLedgerEntry }>();
  for (const e of entries) {
    const key = `${e.kind}:${e.resourceId}`;
    const pair = edges.get(key) ?? {};
    if (e._id.endsWith(':start')) pair.start = e;
    else pair.end = e;
    edges.set(key, pair);
  }
  const out: ResourceByteHours[] = [];
  for (const { start, end } of edges.values()) {
    if (!start) continue;
    const since = Math.max(start.at.getTime(), from.getTime());
    const until = Math.min(end ? end.at.getTime() : Infinity, to.getTime());
    if (until <= since) continue;
    out.push({
      orgId: start.orgId,
      projectId: start.projectId,
      kind: start.kind,
      resourceId: start.resourceId,
      bytes: start.bytes,
      byteHours: (start.bytes * (until - since)) / HOUR_MS,
    });
  }
  return out.sort((a, b) => (a.kind === b.kind ? (a.resourceId < b.resourceId ? -1 : 1) : a.kind < b.kind ? -1 : 1));
}
