import { randomUUID } from 'node:crypto';

import { DeleteObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  type Client,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  ServiceError,
  WorkflowExecutionAlreadyStartedError,
} from '@temporalio/client';

import {
  BACKUP_WORKFLOW,
  backupScheduleId,
  backupWorkflowId,
  type BackupWorkflowInput,
  RESTORE_WORKFLOW,
  restoreWorkflowId,
  type RestoreWorkflowInput,
  type Retention,
  SCHEDULED_BACKUP_WORKFLOW,
  type ScheduledBackupInput,
} from '@shared/contracts/database';
import { backupObjectKey } from '@shared/databases/keys';
import type { DatabaseStore } from '@shared/databases/store';
import type { BackupRecord, BackupTrigger, DatabaseRecord } from '@shared/databases/types';
import { databaseWorkflowVisibility } from '@shared/databases/visibility';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { backupFact, type StorageLedger } from '@shared/usage/storage-ledger';

import type { DatabaseService } from './service';

export interface BackupServiceDeps {
  store: DatabaseStore;
  databases: Pick<DatabaseService, 'insertRecord'>;
  temporal: Client;
  taskQueue: string;
  s3: S3Client;
  bucket: string;
  ledger: Pick<StorageLedger, 'ended'>;
}

const BACKUPS: BackupTrigger[] = ['manual', 'schedule', 'safety'];
const SNAPSHOTS: BackupTrigger[] = ['snapshot'];

/**
 * Why Temporal refused a schedule's spec, or undefined when the failure was something else: the client throws a
 * TypeError for an invalid spec (a cron it cannot parse), and a ServiceError whose cause is the server's
 * INVALID_ARGUMENT for other refusals of the request.
 */
function scheduleRefusal(err: unknown): string | undefined {
  if (err instanceof TypeError) return err.message;
  if (err instanceof ServiceError) {
    const cause = err.cause as { code?: number; details?: string } | undefined;
    if (cause?.code === GRPC_INVALID_ARGUMENT) return cause.details ?? 'the server called it invalid';
  }
  return undefined;
}

/** gRPC's status code for a request the server refuses as invalid. */
const GRPC_INVALID_ARGUMENT = 3;

export const backupNotFound = (id: string, what = 'backup') =>
  new AppError('BACKUP_NOT_FOUND', `No ${what} ${id} of this database; list them with GET …/${what}s.`, {
    backupId: id,
  });

const notReady = (d: DatabaseRecord, doing: string) =>
  new AppError(
    'CONFLICT',
    `Database ${d.name} is ${d.status}, so it cannot be ${doing} now; try again once it reads ready (GET its record).`,
    { databaseId: d._id, status: d.status },
  );

/** `<name>-restored-<8 hex of the restore's ID>`, within a DNS label's 63 characters: one per restore. */
const restoredName = (name: string, restoreId: string) =>
  `${name.slice(0, 43).replace(/-+$/, '')}-restored-${restoreId.slice(0, 8)}`;

/**
 * Backups, snapshots, restores and schedules of a database (docs/architecture.md, "Databases: backups and restores").
 * Each backup and restore is a workflow of its own; a schedule is a Temporal Schedule whose runs back up and then apply
 * retention. The routes have already found the database, so every call here is about that database alone.
 */
export function createBackupService(deps: BackupServiceDeps) {
  const { store } = deps;

  async function startBackup(principal: Principal, d: DatabaseRecord, trigger: BackupTrigger): Promise<BackupRecord> {
    if (d.status !== 'ready') throw notReady(d, trigger === 'snapshot' ? 'snapshotted' : 'backed up');
    const record: BackupRecord = {
      _id: randomUUID(),
      orgId: d.orgId,
      projectId: d.projectId,
      databaseId: d._id,
      databaseName: d.name,
      databaseKind: d.kind,
      engine: d.engine,
      trigger,
      status: 'running',
      objectKey: '',
      sizeBytes: null,
      sha256: null,
      error: null,
      createdBy: principal.user._id,
      createdAt: new Date(),
      completedAt: null,
    };
    record.objectKey = backupObjectKey(record);
    await store.backups.insert(record);
    const input: BackupWorkflowInput = {
      backupId: record._id,
      databaseId: d._id,
      orgId: d.orgId,
      trigger,
      createdBy: principal.user._id,
    };
    try {
      await deps.temporal.workflow.start(BACKUP_WORKFLOW, {
        taskQueue: deps.taskQueue,
        workflowId: backupWorkflowId(record._id),
        args: [input],
        ...databaseWorkflowVisibility(d, principal.org),
        staticSummary: `${trigger} backup of ${d.engine} database ${d.name}`,
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
    return record;
  }

  async function backupOf(d: DatabaseRecord, backupId: string, triggers: BackupTrigger[]): Promise<BackupRecord> {
    const b = await store.backups.get(d.orgId, backupId);
    const what = triggers === SNAPSHOTS ? 'snapshot' : 'backup';
    if (!b || b.databaseId !== d._id || b.status === 'deleted' || !triggers.includes(b.trigger))
      throw backupNotFound(backupId, what);
    return b;
  }

  /** A backup's or snapshot's object, then its record; one still being taken is refused (its object is being written). */
  async function removeStored(s: BackupRecord, what: 'Backup' | 'Snapshot'): Promise<void> {
    if (s.status === 'running')
      throw new AppError('CONFLICT', `${what} ${s._id} is still being taken; delete it once it reads complete.`, {
        [what === 'Snapshot' ? 'snapshotId' : 'backupId']: s._id,
      });
    await deps.s3.send(new DeleteObjectCommand({ Bucket: deps.bucket, Key: s.objectKey }));
    // The ledger's end once the object is gone, and before the record stops saying complete: a delete cut short
    // between them is asked again and writes it then.
    if (s.status === 'complete') await deps.ledger.ended(backupFact(s, new Date()));
    await store.backups.finish(s._id, { status: 'deleted' });
  }

  async function restore(
    principal: Principal,
    d: DatabaseRecord,
    b: BackupRecord,
    body: { target: 'new' | 'in_place'; confirm?: boolean | undefined; name?: string | undefined },
  ) {
    if (b.status !== 'complete')
      throw new AppError(
        'CONFLICT',
        `Backup ${b._id} is ${b.status}; only a complete backup can be restored. List the complete ones with GET …/backups.`,
        { backupId: b._id, status: b.status },
      );
    const restoreId = randomUUID();
    let target: RestoreWorkflowInput['target'];
    let database: DatabaseRecord;
    if (body.target === 'in_place') {
      if (body.confirm !== true)
        throw new AppError(
          'INVALID_REQUEST',
          `A restore in place replaces everything database ${d.name} holds now (a safety backup is taken first). Send "confirm": true to go ahead, or restore to a new database ("target": "new").`,
          { field: 'confirm' },
        );
      if (d.status !== 'ready') throw notReady(d, 'restored into');
      target = { kind: 'in_place', databaseId: d._id, safetyBackupId: randomUUID() };
      database = { ...d, status: 'restoring' };
    } else {
      database = await deps.databases.insertRecord(principal, {
        kind: d.kind,
        engine: d.engine,
        name: body.name ?? restoredName(d.name, restoreId),
        sizeGb: d.sizeGb,
        projectId: d.projectId,
        deploymentId: d.deploymentId,
        restoredFrom: { backupId: b._id },
      });
      target = { kind: 'new', databaseId: database._id };
    }
    const input: RestoreWorkflowInput = {
      restoreId,
      orgId: d.orgId,
      backupId: b._id,
      target,
      requestedBy: principal.user._id,
    };
    await deps.temporal.workflow.start(RESTORE_WORKFLOW, {
      taskQueue: deps.taskQueue,
      workflowId: restoreWorkflowId(restoreId),
      args: [input],
      ...databaseWorkflowVisibility(database, principal.org),
      staticSummary: `restore of backup ${b._id} to ${body.target === 'new' ? `new database ${database.name}` : `${d.name}, in place`}`,
    });
    return {
      restoreId,
      backupId: b._id,
      target: body.target,
      databaseId: database._id,
      ...(target.kind === 'in_place' ? { safetyBackupId: target.safetyBackupId } : {}),
      database,
    };
  }

  const scheduleHandle = (databaseId: string) => deps.temporal.schedule.getHandle(backupScheduleId(databaseId));

  async function describeSchedule(d: DatabaseRecord) {
    try {
      const s = await scheduleHandle(d._id).describe();
      const memo = (s.memo ?? {}) as { cron?: string; timezone?: string; retain?: Retention };
      return {
        databaseId: d._id,
        cron: memo.cron ?? '',
        timezone: memo.timezone ?? 'UTC',
        retain: memo.retain ?? {},
        nextRunAt: s.info.nextActionTimes[0]?.toISOString() ?? null,
        paused: s.state.paused,
      };
    } catch (err) {
      if (err instanceof ScheduleNotFoundError)
        throw new AppError(
          'SCHEDULE_NOT_FOUND',
          `Database ${d.name} has no backup schedule; set one with PUT …/backup-schedule {cron, timezone, retain}.`,
          { databaseId: d._id },
        );
      throw err;
    }
  }

  return {
    backup: (principal: Principal, d: DatabaseRecord) => startBackup(principal, d, 'manual'),
    async snapshot(principal: Principal, d: DatabaseRecord) {
      if (d.kind !== 'managed')
        throw new AppError(
          'CONFLICT',
          `Database ${d.name} belongs to a deployment; snapshots are of managed databases. Take a backup instead (POST …/backups).`,
          { databaseId: d._id },
        );
      return startBackup(principal, d, 'snapshot');
    },
    listBackups: (d: DatabaseRecord, page: { limit: number; offset: number }) =>
      store.backups.list(d.orgId, d._id, { ...page, triggers: BACKUPS }),
    listSnapshots: (d: DatabaseRecord, page: { limit: number; offset: number }) =>
      store.backups.list(d.orgId, d._id, { ...page, triggers: SNAPSHOTS }),
    getBackup: (d: DatabaseRecord, id: string) => backupOf(d, id, BACKUPS),
    getSnapshot: (d: DatabaseRecord, id: string) => backupOf(d, id, SNAPSHOTS),

    restoreBackup: async (
      principal: Principal,
      d: DatabaseRecord,
      backupId: string,
      body: Parameters<typeof restore>[3],
    ) => restore(principal, d, await backupOf(d, backupId, BACKUPS), body),

    /** A snapshot restores to a new managed database, always. */
    restoreSnapshot: async (
      principal: Principal,
      d: DatabaseRecord,
      snapshotId: string,
      body: { name?: string | undefined },
    ) => restore(principal, d, await backupOf(d, snapshotId, SNAPSHOTS), { target: 'new', ...body }),

    deleteSnapshot: async (d: DatabaseRecord, snapshotId: string) =>
      removeStored(await backupOf(d, snapshotId, SNAPSHOTS), 'Snapshot'),

    /**
     * A backup removed on request, whatever made it: retention never removes the newest complete one by itself, but a
     * person who asks for it may (the list shows what is left).
     */
    deleteBackup: async (d: DatabaseRecord, backupId: string) =>
      removeStored(await backupOf(d, backupId, BACKUPS), 'Backup'),

    /** Creates or replaces the database's schedule: a Temporal Schedule whose runs back up, then apply `retain`. */
    async putSchedule(
      principal: Principal,
      d: DatabaseRecord,
      body: { cron: string; timezone: string; retain: Retention },
    ) {
      const input: ScheduledBackupInput = { databaseId: d._id, orgId: d.orgId, retain: body.retain };
      const options = {
        spec: { cronExpressions: [body.cron], timezone: body.timezone },
        action: {
          type: 'startWorkflow' as const,
          workflowType: SCHEDULED_BACKUP_WORKFLOW,
          workflowId: `scheduled-backup/${d._id}`,
          taskQueue: deps.taskQueue,
          args: [input],
        },
        // A backup still running when the next is due: the next is skipped, not stacked.
        policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '1 hour' },
        memo: { cron: body.cron, timezone: body.timezone, retain: body.retain },
        ...databaseWorkflowVisibility(d, principal.org),
      };
      try {
        try {
          await deps.temporal.schedule.create({ scheduleId: backupScheduleId(d._id), ...options });
        } catch (err) {
          if (!(err instanceof ScheduleAlreadyRunning)) throw err;
          await scheduleHandle(d._id).update((prev) => ({
            ...prev,
            spec: options.spec,
            action: options.action,
            policies: { ...prev.policies, ...options.policies },
          }));
          // The update first, so a spec the server refuses leaves the schedule as it was. The memo is what GET shows
          // and cannot be updated in place: it is written with the schedule made again.
          await scheduleHandle(d._id).delete();
          await deps.temporal.schedule.create({ scheduleId: backupScheduleId(d._id), ...options });
        }
      } catch (err) {
        const why = scheduleRefusal(err);
        if (why === undefined) throw err;
        throw new AppError(
          'INVALID_REQUEST',
          `The schedule was refused: ${why}. Give a five-field cron expression such as "0 3 * * *" and an IANA time zone such as "Europe/Paris".`,
          { field: 'cron' },
        );
      }
      return describeSchedule(d);
    },

    getSchedule: describeSchedule,

    async deleteSchedule(d: DatabaseRecord): Promise<void> {
      await describeSchedule(d);
      await scheduleHandle(d._id)
        .delete()
        .catch((err: unknown) => {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        });
    },

    /** With the database: its schedule goes too (nothing to remove is success). */
    async dropSchedule(databaseId: string): Promise<void> {
      await scheduleHandle(databaseId)
        .delete()
        .catch((err: unknown) => {
          if (!(err instanceof ScheduleNotFoundError)) throw err;
        });
    },
  };
}

export type BackupService = ReturnType<typeof createBackupService>;
