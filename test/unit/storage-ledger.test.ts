import {
  backupFact,
  byteHours,
  type LedgerEdge,
  type LedgerFact,
  type StorageLedgerEntry,
  volumeFact,
} from '@shared/usage/storage-ledger';
import { GIB } from '@shared/volumes/mount';

const from = new Date('2026-03-01T00:00:00Z');
const to = new Date('2026-04-01T00:00:00Z');
/** March 2026: 31 days. */
const MARCH_H = 31 * 24;

const entry = (edge: LedgerEdge, fact: LedgerFact): StorageLedgerEntry => ({
  _id: `${fact.kind}:${fact.resourceId}:${edge}`,
  ...fact,
});
const vol = (id: string, sizeGb: number) => ({ _id: id, orgId: 'o', projectId: 'p', sizeGb });

describe('byteHours: bytes held × hours held, per resource, over [from, to)', () => {
  it('counts a volume created before the period and deleted inside it from the period start to its end', () => {
    const v = vol('v1', 2);
    const entries = [
      entry('start', volumeFact(v, new Date('2026-02-10T08:00:00Z'))),
      entry('end', volumeFact(v, new Date('2026-03-02T12:00:00Z'))),
    ];
    expect(byteHours(entries, from, to)).toEqual([
      { orgId: 'o', projectId: 'p', kind: 'volume', resourceId: 'v1', bytes: 2 * GIB, byteHours: 2 * GIB * 36 },
    ]);
  });

  it('counts a resource still present to the period end, and one created inside it from its start', () => {
    const old = vol('v-old', 1);
    const b = { _id: 'b1', orgId: 'o', projectId: null, sizeBytes: 1_000 };
    const entries = [
      entry('start', volumeFact(old, new Date('2025-12-01T00:00:00Z'))),
      entry('start', backupFact(b, new Date('2026-03-31T23:00:00Z'))),
    ];
    const got = byteHours(entries, from, to);
    expect(got.map((r) => [r.kind, r.resourceId, r.byteHours])).toEqual([
      ['backup', 'b1', 1_000],
      ['volume', 'v-old', GIB * MARCH_H],
    ]);
  });

  it('counts a resource created and deleted inside the period for exactly its lifetime', () => {
    const v = vol('v2', 3);
    const entries = [
      entry('start', volumeFact(v, new Date('2026-03-10T00:00:00Z'))),
      entry('end', volumeFact(v, new Date('2026-03-10T00:30:00Z'))),
    ];
    expect(byteHours(entries, from, to)[0]!.byteHours).toBe(3 * GIB * 0.5);
  });

  it('leaves out a resource ended before the period, one started at or after its end, and one never started', () => {
    const gone = vol('gone', 1);
    const later = vol('later', 1);
    const failed = vol('failed', 1);
    const entries = [
      entry('start', volumeFact(gone, new Date('2026-01-01T00:00:00Z'))),
      entry('end', volumeFact(gone, from)),
      entry('start', volumeFact(later, to)),
      entry('end', volumeFact(failed, new Date('2026-03-05T00:00:00Z'))),
    ];
    expect(byteHours(entries, from, to)).toEqual([]);
  });

  it('reads the same whatever order the entries come in, and the same for a period that spans only part of a day', () => {
    const v = vol('v3', 1);
    const start = entry('start', volumeFact(v, new Date('2026-03-15T10:00:00Z')));
    const end = entry('end', volumeFact(v, new Date('2026-03-15T20:00:00Z')));
    const day = [new Date('2026-03-15T12:00:00Z'), new Date('2026-03-15T15:00:00Z')] as const;
    expect(byteHours([end, start], ...day)).toEqual(byteHours([start, end], ...day));
    expect(byteHours([start, end], ...day)[0]!.byteHours).toBe(GIB * 3);
  });
});
