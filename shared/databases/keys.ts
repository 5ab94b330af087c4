import { DUMP_FORMAT } from './engines';
import type { BackupRecord } from './types';

/** Where a backup's object lives: under its organisation and database, so a listing never crosses either. */
export const backupObjectKey = (b: Pick<BackupRecord, 'orgId' | 'databaseId' | '_id' | 'engine'>) =>
  `database-backups/${b.orgId}/${b.databaseId}/${b._id}.${DUMP_FORMAT[b.engine].extension}`;
