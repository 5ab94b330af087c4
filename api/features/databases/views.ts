import type { BackupRecord, DatabaseRecord } from '@shared/databases/types';

/** A database as the platform API and MCP show it: never its credentials (GET …/connection, audited, has those). */
export const databaseView = (d: DatabaseRecord) => ({
  id: d._id,
  kind: d.kind,
  engine: d.engine,
  name: d.name,
  sizeGb: d.sizeGb,
  projectId: d.projectId,
  deploymentId: d.deploymentId,
  host: d.host,
  port: d.port,
  status: d.status,
  error: d.error,
  ...(d.restoredFrom ? { restoredFrom: d.restoredFrom } : {}),
  createdAt: d.createdAt.toISOString(),
  updatedAt: d.updatedAt.toISOString(),
});

export const backupView = (b: BackupRecord) => ({
  id: b._id,
  databaseId: b.databaseId,
  engine: b.engine,
  trigger: b.trigger,
  status: b.status,
  sizeBytes: b.sizeBytes,
  sha256: b.sha256,
  error: b.error,
  createdAt: b.createdAt.toISOString(),
  completedAt: b.completedAt ? b.completedAt.toISOString() : null,
});

export type DatabaseView = ReturnType<typeof databaseView>;
