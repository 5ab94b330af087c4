/**
 * The database workflows' contract: what the api needs to start a database's workflow, its backups and restores, and
 * to ask a database to go; no workflow code (docs/architecture.md, "Layers and where code goes").
 */
import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';

import type { DatabaseEngine } from '../databases/engines';
import type { BackupTrigger, DatabaseStatus } from '../databases/types';

/** The exported functions' names in workflows/database. */
export const DATABASE_WORKFLOW = 'databaseWorkflow';
export const BACKUP_WORKFLOW = 'backupWorkflow';
export const RESTORE_WORKFLOW = 'restoreWorkflow';
export const SCHEDULED_BACKUP_WORKFLOW = 'scheduledBackupWorkflow';

/** One per database, for as long as it exists; one per backup or snapshot; one per restore. */
export const databaseWorkflowId = (databaseId: string) => `database/${databaseId}`;
export const backupWorkflowId = (backupId: string) => `backup/${backupId}`;
export const restoreWorkflowId = (restoreId: string) => `restore/${restoreId}`;
/** The Temporal Schedule of a database's backups (one per database; PUT replaces it). */
export const backupScheduleId = (databaseId: string) => `backup-schedule/${databaseId}`;

export interface DatabaseWorkflowInput {
  databaseId: string;
  orgId: string;
  engine: DatabaseEngine;
  sizeGb: number;
  /** The storage its data lives on. */
  volumeId: string;
}

export interface BackupWorkflowInput {
  backupId: string;
  databaseId: string;
  orgId: string;
  trigger: BackupTrigger;
  /** The user who asked, or `system` for a schedule's. */
  createdBy: string;
  /**
   * When it was taken, in ms (a schedule's run gives its workflow time, which retention then compares against: the
   * same clock for both, also on a time-skipping test server).
   */
  at?: number;
}

export interface BackupOutcome {
  backupId: string;
  sizeBytes: number;
  sha256: string;
}

export interface Retention {
  /** Keep at most this many of the schedule's backups. */
  count?: number;
  /** Keep the schedule's backups at most this many days. */
  days?: number;
}

export interface ScheduledBackupInput {
  databaseId: string;
  orgId: string;
  retain: Retention;
}

export interface RestoreWorkflowInput {
  restoreId: string;
  orgId: string;
  backupId: string;
  /** The database restored into: a new one the api recorded (status creating), or the backup's own, in place. */
  target: { kind: 'new'; databaseId: string } | { kind: 'in_place'; databaseId: string; safetyBackupId: string };
  requestedBy: string;
}

export interface RestoreOutcome {
  databaseId: string;
  /** The backup taken of the database's data before it was replaced (in place only). */
  safetyBackupId?: string;
}

/** Removes the container, the storage and the record; answers once all are gone. */
export const deleteDatabaseUpdate = defineUpdate<{ deleted: true }>('deleteDatabase');

/**
 * The same removal, asked by a destroyed deployment's cleanup (with signalWithStart, so a database whose workflow
 * never started is removed too); nobody waits for an answer.
 */
export const deleteDatabaseSignal = defineSignal('deleteDatabase');

/** Where the database stands, as its workflow sees it. */
export const databaseStatusQuery = defineQuery<{ status: DatabaseStatus; error: string | null }>('databaseStatus');

/**
 * Failure types the database workflows tell apart. Each one's message is written for the database's owner and becomes
 * the record's `error`, the backup's, or the restore's failure.
 */
export const DATABASE_FAILURES = {
  /** The backup's object is missing from the object store. */
  backupMissing: 'BackupMissing',
  /** The backup's object is not the bytes recorded (size or SHA-256 differ). */
  backupCorrupt: 'BackupCorrupt',
  /** The engine's own tool refused the dump or the restore. */
  engineTool: 'DatabaseToolFailed',
  /** The database is not ready (being made, restored or deleted), so it cannot be backed up or restored into. */
  notReady: 'DatabaseNotReady',
  /** The database's server did not come up. */
  startFailed: 'DatabaseStartFailed',
} as const;
