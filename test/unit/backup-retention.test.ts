import { retentionVictims } from '@activities/database/retention';
import type { BackupRecord, BackupTrigger } from '@shared/databases/types';

const DAY = 24 * 60 * 60 * 1000;
const now = new Date('2026-11-26T12:00:00Z');

function backup(id: string, daysAgo: number, trigger: BackupTrigger = 'schedule'): BackupRecord {
  return {
    _id: id,
    orgId: 'o',
    projectId: null,
    databaseId: 'd',
    databaseName: 'db',
    databaseKind: 'managed',
    engine: 'postgresql',
    trigger,
    status: 'complete',
    objectKey: `k/${id}`,
    sizeBytes: 1,
    sha256: 'x',
    error: null,
    createdBy: 'system',
    createdAt: new Date(now.getTime() - daysAgo * DAY),
    completedAt: null,
  };
}

const ids = (bs: BackupRecord[]) => bs.map((b) => b._id).sort();

describe('retention of a schedule’s backups', () => {
  it('removes the schedule’s backups past the newest count', () => {
    const all = [backup('a', 0), backup('b', 1), backup('c', 2), backup('d', 3)];
    expect(ids(retentionVictims(all, { count: 2 }, now))).toEqual(['c', 'd']);
  });

  it('removes the schedule’s backups older than days', () => {
    const all = [backup('a', 0), backup('b', 1.5), backup('c', 3)];
    expect(ids(retentionVictims(all, { days: 1 }, now))).toEqual(['b', 'c']);
  });

  it('never removes the newest complete backup, even when every backup is older than days', () => {
    const all = [backup('old', 30), backup('older', 40)];
    expect(ids(retentionVictims(all, { days: 7 }, now))).toEqual(['older']);
    expect(ids(retentionVictims(all, { count: 0 as number }, now))).toEqual(['older']);
  });

  it('never removes a manual backup, a safety backup or a snapshot, and keeps the newest whatever made it', () => {
    const all = [
      backup('manual', 0, 'manual'),
      backup('s1', 5),
      backup('safety', 6, 'safety'),
      backup('snap', 9, 'snapshot'),
    ];
    // The newest is the manual one: the schedule's own may all go once they are past retention.
    expect(ids(retentionVictims(all, { days: 1 }, now))).toEqual(['s1']);
  });

  it('keeps everything when retain says nothing', () => {
    expect(retentionVictims([backup('a', 0), backup('b', 100)], {}, now)).toEqual([]);
  });
});
