import type { Request, RequestHandler } from 'express';
import type { z } from 'zod';

import type { DatabaseRecord } from '@shared/databases/types';
import type { Principal } from '@shared/identity/service';
import type { Permission } from '@shared/permissions';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { Backup, BackupList, PageQuery, Restore, RestoreRequest, Schedule, ScheduleRequest } from './schemas';
import type { BackupService } from './service.backups';
import { backupView, databaseView } from './views';

/** How the routes of one path family find their database and check the caller may touch it. */
export interface DatabasePath {
  /** `/deployments/:id/databases/:dbId` or `/databases/:id`. */
  prefix: string;
  params: z.ZodObject;
  /** `params` and the backup's ID. */
  backupParams: z.ZodObject;
  /** The database the path names, or DATABASE_NOT_FOUND. */
  find: (principal: Principal, params: Record<string, string>) => Promise<DatabaseRecord>;
  can: (permission: Permission) => RequestHandler;
  tags: string[];
}

export const restoreView = (r: Awaited<ReturnType<BackupService['restoreBackup']>>) => ({
  restoreId: r.restoreId,
  backupId: r.backupId,
  target: r.target,
  databaseId: r.databaseId,
  ...(r.safetyBackupId ? { safetyBackupId: r.safetyBackupId } : {}),
  database: databaseView(r.database),
});

const params = (req: Request) => req.params as Record<string, string>;

/**
 * Backups, restores and the backup schedule, the same under a deployment's database and a managed one: one
 * implementation, two paths.
 */
export function backupRoutes(p: DatabasePath, backups: BackupService): RouteDef[] {
  const { prefix, tags } = p;
  const BackupParams = p.backupParams;
  return [
    route({
      method: 'post',
      path: `${prefix}/backups`,
      summary: "Back up the database now: the engine's own consistent dump, streamed to the object store",
      description:
        'Answers at once with the backup (running); it reads complete, with its size and SHA-256, once the whole dump is in the object store, or failed with why. pg_dump -Fc for PostgreSQL, mariadb-dump --single-transaction for MariaDB, an RDB file for Redis.',
      tags,
      request: { params: p.params },
      before: [p.can('database.backup')],
      responses: {
        202: { description: 'The backup, running', schema: success(Backup) },
        404: { description: 'DATABASE_NOT_FOUND' },
        409: { description: 'CONFLICT: the database is not ready' },
      },
      handler: async (_input, req, res) => {
        const d = await p.find(principalOf(req), params(req));
        res.status(202).json(ok(backupView(await backups.backup(principalOf(req), d))));
      },
    }),
    route({
      method: 'get',
      path: `${prefix}/backups`,
      summary: 'The database’s backups, newest first (manual, scheduled and safety backups)',
      tags,
      request: { params: p.params, query: PageQuery },
      before: [p.can('database.read')],
      responses: {
        200: { description: 'A page of backups', schema: success(BackupList) },
        404: { description: 'DATABASE_NOT_FOUND' },
      },
      handler: async ({ query }, req, res) => {
        const d = await p.find(principalOf(req), params(req));
        const { items, total } = await backups.listBackups(d, query);
        res.json(ok({ backups: items.map(backupView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: `${prefix}/backups/:backupId`,
      summary: 'One backup: its status, size and SHA-256',
      tags,
      request: { params: BackupParams },
      before: [p.can('database.read')],
      responses: {
        200: { description: 'The backup', schema: success(Backup) },
        404: { description: 'DATABASE_NOT_FOUND or BACKUP_NOT_FOUND' },
      },
      handler: async (_input, req, res) => {
        const d = await p.find(principalOf(req), params(req));
        res.json(ok(backupView(await backups.getBackup(d, params(req).backupId!))));
      },
    }),
    route({
      method: 'delete',
      path: `${prefix}/backups/:backupId`,
      summary: 'Delete a backup and its object (one still running is refused); the database is not touched',
      tags,
      request: { params: BackupParams },
      before: [p.can('database.delete')],
      responses: {
        204: { description: 'Deleted' },
        404: { description: 'DATABASE_NOT_FOUND or BACKUP_NOT_FOUND' },
        409: { description: 'CONFLICT: the backup is still being taken' },
      },
      handler: async (_input, req, res) => {
        const d = await p.find(principalOf(req), params(req));
        await backups.deleteBackup(d, params(req).backupId!);
        res.status(204).end();
      },
    }),
    route({
      method: 'post',
      path: `${prefix}/backups/:backupId/restore`,
      summary: 'Restore a backup: to a new database (the default), or in place with confirm: true',
      description:
        'The backup is checked against the size and SHA-256 recorded when it was taken before anything is touched: a missing or corrupt backup fails the restore and leaves every database as it was. To a new database: a database of the same engine and kind is made beside this one (same deployment or project) and the backup loaded into it; link it or read its connection to use it. In place: a safety backup of what the database holds is taken first (safetyBackupId), then the backup replaces its data; the database reads restoring meanwhile.',
      tags,
      request: { params: BackupParams, body: RestoreRequest },
      before: [p.can('database.restore')],
      responses: {
        202: { description: 'The restore, running (workflow restore/<restoreId>)', schema: success(Restore) },
        400: { description: 'INVALID_REQUEST: in_place without confirm: true' },
        404: { description: 'DATABASE_NOT_FOUND or BACKUP_NOT_FOUND' },
        409: { description: 'CONFLICT: the backup is not complete, or the database not ready' },
        429: { description: 'QUOTA_EXCEEDED: a new database would pass the plan’s limits' },
      },
      handler: async ({ body }, req, res) => {
        const d = await p.find(principalOf(req), params(req));
        res
          .status(202)
          .json(ok(restoreView(await backups.restoreBackup(principalOf(req), d, params(req).backupId!, body))));
      },
    }),
    route({
      method: 'put',
      path: `${prefix}/backup-schedule`,
      summary: 'Back the database up on a schedule (a Temporal Schedule), keeping what retain says',
      description:
        'Replaces any schedule the database had. Each run takes a backup, then removes the schedule’s backups past retain.count or older than retain.days, decided from our own records; the newest complete backup is never removed, and manual, safety backups and snapshots are never removed by a schedule.',
      tags,
      request: { params: p.params, body: ScheduleRequest },
      before: [p.can('database.backup')],
      responses: {
        200: { description: 'The schedule', schema: success(Schedule) },
        400: { description: 'INVALID_REQUEST: the cron expression or time zone was refused' },
        404: { description: 'DATABASE_NOT_FOUND' },
      },
      handler: async ({ body }, req, res) => {
        const d = await p.find(principalOf(req), params(req));
        res.json(ok(await backups.putSchedule(principalOf(req), d, body)));
      },
    }),
    route({
      method: 'get',
      path: `${prefix}/backup-schedule`,
      summary: 'The database’s backup schedule and its next run',
      tags,
      request: { params: p.params },
      before: [p.can('database.read')],
      responses: {
        200: { description: 'The schedule', schema: success(Schedule) },
        404: { description: 'DATABASE_NOT_FOUND or SCHEDULE_NOT_FOUND' },
      },
      handler: async (_input, req, res) => {
        const d = await p.find(principalOf(req), params(req));
        res.json(ok(await backups.getSchedule(d)));
      },
    }),
    route({
      method: 'delete',
      path: `${prefix}/backup-schedule`,
      summary: 'Stop backing the database up on a schedule; its backups stay',
      tags,
      request: { params: p.params },
      before: [p.can('database.backup')],
      responses: { 204: { description: 'Removed' }, 404: { description: 'DATABASE_NOT_FOUND or SCHEDULE_NOT_FOUND' } },
      handler: async (_input, req, res) => {
        const d = await p.find(principalOf(req), params(req));
        await backups.deleteSchedule(d);
        res.status(204).end();
      },
    }),
  ];
}
