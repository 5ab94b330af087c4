import { z } from 'zod';

import type { Principal } from '@shared/identity/service';
import { ignore } from '@shared/ignore';

import { defineTool, DESTRUCTIVE, READ, type ToolDef, WRITE } from '../../mcp/tool';
import type { DatabasesContext } from './compose';
import { restoreView } from './routes.common';
import {
  Backup,
  CreateManagedDatabaseRequest,
  CreateServiceDatabaseRequest,
  Database,
  DatabaseListQuery,
  PageQuery,
  Restore,
  RestoreRequest,
} from './schemas';
import { backupView, databaseView } from './views';

const DatabaseRef = z.object({ databaseId: z.uuid('a database ID in UUID format') });

/** What an agent needs of databases: create one for a deployment (or a project), list, back up, restore. */
export function databaseTools(deps: Pick<DatabasesContext, 'databases' | 'backups' | 'deployments'>): ToolDef[] {
  const { databases, backups, deployments } = deps;
  /** The project of the database the call names, so the project role decides; unknown: the handler answers 404. */
  const ofDatabase = async (p: Principal, input: { databaseId: string }) =>
    (await databases.get(p, input.databaseId).catch(ignore('an unknown database is the handler’s 404', undefined)))
      ?.projectId ?? undefined;
  const ofDeployment = async (p: Principal, input: { deploymentId: string }) =>
    (
      await deployments
        .status(p, input.deploymentId)
        .catch(ignore('an unknown deployment is the handler’s 404', undefined))
    )?.record.projectId ?? undefined;
  return [
    defineTool({
      name: 'create_database',
      title: 'Create a database for a deployment',
      description:
        'Creates a PostgreSQL, MariaDB or Redis database beside the deployment and ships a new release whose env has ' +
        'envName (DATABASE_URL, or REDIS_URL for redis) set to its connection URL. The database reads ready within ' +
        'seconds (list_databases); the release starts once it is.',
      permission: 'database.create',
      project: ofDeployment,
      input: CreateServiceDatabaseRequest.extend({ deploymentId: z.uuid('a deployment ID in UUID format') }),
      output: z.object({ database: Database, envName: z.string(), release: z.unknown() }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'database', id: (_i, out) => out?.database.id },
      run: async ({ principal, input }) => {
        const { deploymentId, ...body } = input;
        const r = await databases.createService(principal, deploymentId, body);
        return { database: databaseView(r.database), envName: r.envName, release: r.release };
      },
    }),
    defineTool({
      name: 'create_managed_database',
      title: 'Create a managed database in a project',
      description:
        'Creates a PostgreSQL, MariaDB or Redis database that belongs to a project and can serve several of its ' +
        'deployments (link it with link_database).',
      permission: 'database.create',
      project: async (_p, input) => input.projectId,
      input: CreateManagedDatabaseRequest,
      output: z.object({ database: Database }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'database', id: (_i, out) => out?.database.id },
      run: async ({ principal, input }) => ({
        database: databaseView(await databases.createManaged(principal, input)),
      }),
    }),
    defineTool({
      name: 'link_database',
      title: 'Link a managed database to a deployment',
      description:
        'Gives a deployment of the database’s project its connection URL as envName (DATABASE_URL or REDIS_URL when ' +
        'absent), shipped as a new release.',
      permission: 'database.create',
      project: ofDatabase,
      input: DatabaseRef.extend({ deploymentId: z.uuid(), envName: z.string().optional() }),
      output: z.object({ database: Database, deploymentId: z.string(), envName: z.string(), release: z.unknown() }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'database', id: (i) => i.databaseId },
      run: async ({ principal, input }) => {
        const r = await databases.link(principal, input.databaseId, input);
        return {
          database: databaseView(r.database),
          deploymentId: r.deploymentId,
          envName: r.envName,
          release: r.release,
        };
      },
    }),
    defineTool({
      name: 'list_databases',
      title: 'List databases',
      description:
        'Databases of the projects you can see: deployments’ services and managed ones (kind), each with its engine, ' +
        'status (creating, ready, restoring, failed, deleting) and internal host.',
      permission: 'database.read',
      input: DatabaseListQuery.extend({ deploymentId: z.uuid().optional() }),
      output: z.object({ databases: z.array(Database), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await databases.list(principal, input);
        return { databases: items.map(databaseView), total };
      },
    }),
    defineTool({
      name: 'backup_database',
      title: 'Back up a database',
      description:
        'Takes a backup now (the engine’s own dump, with its SHA-256); it reads complete once whole (list_backups).',
      permission: 'database.backup',
      project: ofDatabase,
      input: DatabaseRef,
      output: z.object({ backup: Backup }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'backup', id: (_i, out) => out?.backup.id },
      run: async ({ principal, input }) => {
        const d = await databases.get(principal, input.databaseId);
        return { backup: backupView(await backups.backup(principal, d)) };
      },
    }),
    defineTool({
      name: 'list_backups',
      title: 'List a database’s backups',
      description: 'Backups newest first, each with its status, size and SHA-256; only complete ones can be restored.',
      permission: 'database.read',
      project: ofDatabase,
      input: DatabaseRef.extend(PageQuery.shape),
      output: z.object({ backups: z.array(Backup), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const d = await databases.get(principal, input.databaseId);
        const { items, total } = await backups.listBackups(d, input);
        return { backups: items.map(backupView), total };
      },
    }),
    defineTool({
      name: 'restore_backup',
      title: 'Restore a database backup',
      description:
        'Restores a complete backup, checked against its SHA-256 first: to a new database by default, or in place ' +
        '(target in_place, confirm true: a safety backup is taken first).',
      permission: 'database.restore',
      project: ofDatabase,
      input: DatabaseRef.extend({ backupId: z.uuid() }).extend(RestoreRequest.shape),
      output: z.object({ restore: Restore }),
      annotations: DESTRUCTIVE,
      audit: { resource: 'database', id: (i) => i.databaseId },
      run: async ({ principal, input }) => {
        const { databaseId, backupId, ...body } = input;
        const d = await databases.get(principal, databaseId);
        return { restore: restoreView(await backups.restoreBackup(principal, d, backupId, body)) };
      },
    }),
  ];
}
