import { z } from 'zod';

import { DATABASE_ENGINES } from '@shared/databases/engines';
import { BACKUP_STATUSES, BACKUP_TRIGGERS, DATABASE_KINDS, DATABASE_STATUSES } from '@shared/databases/types';

import { queryInt } from '../../http/fields';

/**
 * The IANA time zones this runtime knows (and Temporal's server with it), as an enum: whether a name is a zone is the
 * time zone database's, which only a list of its names states.
 */
const TIME_ZONES = ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')] as [string, ...string[]];

/** The largest database the api accepts; the plan's total bounds it further. */
export const MAX_DATABASE_GB = 1024;

const engine = z.enum(DATABASE_ENGINES).meta({
  description: 'postgresql (PostgreSQL), mariadb (MariaDB, MySQL-compatible) or redis (Redis), from images built here',
});

/** A DNS label, as volumes and deployments name themselves. */
const name = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'a DNS label: lowercase letters, digits and "-", at most 63 characters');

const sizeGb = z
  .number()
  .int('whole gigabytes')
  .min(1)
  .max(MAX_DATABASE_GB)
  .meta({ description: `Storage in GB (whole GiB, 1 to ${MAX_DATABASE_GB}); a write past it fails in the server` });

/** An environment variable name the app reads the connection URL from; the same rule as the deployment's env names. */
export const envName = z
  .string()
  .max(128)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'letters, digits and "_", not starting with a digit')
  .meta({ description: 'The environment variable the connection URL reaches the app as' });

export const CreateServiceDatabaseRequest = z
  .object({
    engine,
    name: name
      .optional()
      .meta({ description: 'Unique among the deployment’s databases; the engine’s name when absent' }),
    sizeGb: sizeGb.default(1),
    envName: envName
      .optional()
      .meta({ description: 'DATABASE_URL for postgresql and mariadb, REDIS_URL for redis, when absent' }),
  })
  .strict()
  .meta({ id: 'CreateServiceDatabaseRequest' });

export const CreateManagedDatabaseRequest = z
  .object({
    projectId: z.uuid('a project ID in UUID format').meta({ description: 'The project it belongs to' }),
    engine,
    name: name.meta({ description: 'Unique among the organisation’s managed databases' }),
    sizeGb,
  })
  .strict()
  .meta({ id: 'CreateManagedDatabaseRequest' });

export const LinkRequest = z
  .object({
    deploymentId: z.uuid('a deployment ID in UUID format'),
    envName: envName.optional(),
  })
  .strict()
  .meta({ id: 'DatabaseLinkRequest' });

export const RestoreRequest = z
  .object({
    target: z
      .enum(['new', 'in_place'])
      .default('new')
      .meta({ description: 'new (the default): a new database beside this one; in_place: over this database’s data' }),
    confirm: z.boolean().optional().meta({
      description:
        'Must be true for in_place: the data the database holds now is replaced (a safety backup is taken first)',
    }),
    name: name
      .optional()
      .meta({ description: 'The new database’s name (target new); `<name>-restored-<n>` when absent' }),
  })
  .strict()
  .meta({ id: 'RestoreRequest' });

export const ScheduleRequest = z
  .object({
    cron: z
      .string()
      .min(9)
      .max(100)
      .regex(/^[0-9*/,\- A-Za-z?#LW]+$/, 'a five-field cron expression, e.g. "0 3 * * *"')
      .meta({
        description: 'When backups run: a five-field cron expression (minute hour day-of-month month day-of-week)',
      }),
    timezone: z
      .enum(TIME_ZONES, { error: 'an IANA time zone such as "UTC" or "Europe/Paris"' })
      .default('UTC')
      .meta({ description: 'The IANA time zone the cron expression is read in' }),
    retain: z
      .object({
        count: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .optional()
          .meta({ description: 'Keep the newest count of the schedule’s backups' }),
        days: z
          .number()
          .int()
          .min(1)
          .max(3650)
          .optional()
          .meta({ description: 'Keep the schedule’s backups this many days' }),
      })
      .strict()
      .default({})
      .meta({
        description: 'What the schedule keeps; the newest good backup is always kept. Absent: every backup is kept',
      }),
  })
  .strict()
  .meta({ id: 'BackupScheduleRequest' });

export const DatabaseIdParams = z.object({ id: z.uuid('a database ID in UUID format') });
export const ServiceDatabaseParams = z.object({
  id: z.uuid('a deployment ID in UUID format'),
  dbId: z.uuid('a database ID in UUID format'),
});
export const DeploymentIdParams = z.object({ id: z.uuid('a deployment ID in UUID format') });
export const LinkParams = z.object({
  id: z.uuid('a database ID in UUID format'),
  deploymentId: z.uuid('a deployment ID in UUID format'),
});
export const BackupParams = z.object({
  id: z.uuid('a database ID in UUID format'),
  backupId: z.uuid('a backup ID in UUID format'),
});
export const ServiceBackupParams = ServiceDatabaseParams.extend({ backupId: z.uuid('a backup ID in UUID format') });
export const SnapshotParams = z.object({
  id: z.uuid('a database ID in UUID format'),
  snapshotId: z.uuid('a snapshot ID in UUID format'),
});

export const PageQuery = z
  .object({ limit: queryInt(1, 100).default(20), offset: queryInt(0, 1_000_000).default(0) })
  .strict();
export const DatabaseListQuery = PageQuery.extend({
  projectId: z.uuid('a project ID in UUID format').optional(),
  kind: z.enum(DATABASE_KINDS).optional(),
}).strict();

export const Database = z
  .object({
    id: z.uuid(),
    kind: z
      .enum(DATABASE_KINDS)
      .meta({ description: 'service: one deployment’s; managed: a project’s, linked to deployments' }),
    engine,
    name: z.string(),
    sizeGb: z.number().int(),
    projectId: z.string().nullable(),
    deploymentId: z.string().nullable(),
    host: z.string().meta({ description: 'The internal host name the organisation’s deployments reach it at' }),
    port: z.number().int(),
    status: z.enum(DATABASE_STATUSES).meta({
      description:
        'creating: its server is being started; ready: it serves; restoring: a restore in place runs; failed: see error; deleting: it and its backups are being removed',
    }),
    error: z.string().nullable(),
    restoredFrom: z.object({ backupId: z.string() }).optional(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Database' });

export const DatabaseList = z
  .object({ databases: Database.array(), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'DatabaseList' });

export const Connection = z
  .object({
    host: z.string(),
    port: z.number().int(),
    user: z.string(),
    password: z.string(),
    database: z.string(),
    url: z.string(),
  })
  .meta({ id: 'DatabaseConnection' });

export const Backup = z
  .object({
    id: z.uuid(),
    databaseId: z.string(),
    engine,
    trigger: z.enum(BACKUP_TRIGGERS),
    status: z.enum(BACKUP_STATUSES).meta({
      description:
        'running: its dump streams to the object store; complete: whole, with its size and SHA-256; failed: see error',
    }),
    sizeBytes: z.number().int().nullable(),
    sha256: z.string().nullable(),
    error: z.string().nullable(),
    createdAt: z.iso.datetime(),
    completedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'DatabaseBackup' });

export const BackupList = z
  .object({ backups: Backup.array(), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'DatabaseBackupList' });
export const SnapshotList = z
  .object({ snapshots: Backup.array(), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'DatabaseSnapshotList' });

export const Restore = z
  .object({
    restoreId: z.uuid(),
    backupId: z.uuid(),
    target: z.enum(['new', 'in_place']),
    databaseId: z.uuid().meta({ description: 'The database restored into (the new one, or this one)' }),
    safetyBackupId: z
      .uuid()
      .optional()
      .meta({ description: 'In place: the backup taken of the data before it is replaced' }),
    database: Database,
  })
  .meta({ id: 'DatabaseRestore' });

export const Schedule = z
  .object({
    databaseId: z.uuid(),
    cron: z.string(),
    timezone: z.string(),
    retain: z.object({ count: z.number().int().optional(), days: z.number().int().optional() }),
    nextRunAt: z.iso.datetime().nullable(),
    paused: z.boolean(),
  })
  .meta({ id: 'BackupSchedule' });

export const LinkList = z
  .object({ links: z.object({ deploymentId: z.string(), envName: z.string() }).array() })
  .meta({ id: 'DatabaseLinkList' });
