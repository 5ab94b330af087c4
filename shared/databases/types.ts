import type { Sealed } from '../secrets/box';
import type { DatabaseEngine } from './engines';

/**
 * A database: a server of one engine in a container of its own, its data on storage of a fixed size, reached by its
 * organisation's containers at a stable internal host name and by nothing else (docs/architecture.md, "Databases").
 * One implementation serves both kinds: a `service` belongs to one deployment (and goes with it unless kept), a
 * `managed` database belongs to a project and serves the deployments linked to it.
 */
export const DATABASE_KINDS = ['service', 'managed'] as const;
export type DatabaseKind = (typeof DATABASE_KINDS)[number];

/** creating → ready (or failed, saying what to do); restoring while a restore in place runs; deleting → gone. */
export const DATABASE_STATUSES = ['creating', 'ready', 'failed', 'restoring', 'deleting'] as const;
export type DatabaseStatus = (typeof DATABASE_STATUSES)[number];

export interface DatabaseRecord {
  _id: string;
  orgId: string;
  projectId: string | null;
  kind: DatabaseKind;
  /** The deployment a service belongs to; null for a managed database. */
  deploymentId: string | null;
  engine: DatabaseEngine;
  /** Unique among the databases of its deployment (a service) or its organisation (managed). */
  name: string;
  /** `<orgId>/<deploymentId or "managed">/<name>`: what the unique index holds, freed when the record goes. */
  nameKey: string;
  sizeGb: number;
  /** The storage its data lives on: a volume of the database's own, never listed with the organisation's volumes. */
  volumeId: string;
  /** The internal host name its organisation's containers reach it at. */
  host: string;
  port: number;
  /** User, password and database name, sealed for this database (credentials.ts). */
  credentialsSealed: Sealed;
  status: DatabaseStatus;
  /** Why it could not be made or restored, when status is failed; null otherwise. */
  error: string | null;
  /** The backup or snapshot it was made from, for a database a restore created. */
  restoredFrom?: { backupId: string };
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}

/** What a backup or snapshot is: a manual one, a schedule's, the safety copy taken before a restore in place, or a snapshot. */
export const BACKUP_TRIGGERS = ['manual', 'schedule', 'safety', 'snapshot'] as const;
export type BackupTrigger = (typeof BACKUP_TRIGGERS)[number];

/**
 * running: its dump is streaming to the object store; complete: the object is whole, its size and SHA-256 known (only
 * these count as backups: restores and retention see nothing else); failed: the dump or the upload failed, and no
 * object was kept; deleted: retention or a request removed its object.
 */
export const BACKUP_STATUSES = ['running', 'complete', 'failed', 'deleted'] as const;
export type BackupStatus = (typeof BACKUP_STATUSES)[number];

export interface BackupRecord {
  _id: string;
  orgId: string;
  projectId: string | null;
  databaseId: string;
  /** The database's name and kind when it was taken: a snapshot outlives its database. */
  databaseName: string;
  databaseKind: DatabaseKind;
  engine: DatabaseEngine;
  trigger: BackupTrigger;
  status: BackupStatus;
  /** The object's key in the bucket. */
  objectKey: string;
  sizeBytes: number | null;
  sha256: string | null;
  error: string | null;
  createdBy: string;
  createdAt: Date;
  completedAt: Date | null;
}
