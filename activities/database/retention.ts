import type { Retention } from '@shared/contracts/database';
import type { BackupRecord } from '@shared/databases/types';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The schedule's backups that `retain` no longer keeps: past the `count` newest of the schedule's complete backups, or
 * older than `days`. Only the schedule's own backups are ever removed (a manual backup, a safety copy or a snapshot
 * stays until it is asked to go), and never the newest complete backup of the database, whatever made it: retention
 * cannot leave a database without a good copy.
 */
export function retentionVictims(complete: BackupRecord[], retain: Retention, now: Date): BackupRecord[] {
  const newest = [...complete].sort(
    (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a._id < b._id ? -1 : 1),
  );
  const keepFirst = newest[0]?._id;
  const scheduled = newest.filter((b) => b.trigger === 'schedule');
  return scheduled.filter((b, i) => {
    if (b._id === keepFirst) return false;
    const beyondCount = retain.count !== undefined && i >= retain.count;
    const tooOld = retain.days !== undefined && now.getTime() - b.createdAt.getTime() > retain.days * DAY_MS;
    return beyondCount || tooOld;
  });
}
