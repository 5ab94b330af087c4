import { z } from 'zod';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { deploymentProject } from '../deployments/access';
import { databaseProject } from './access';
import type { DatabasesContext } from './compose';
import { backupRoutes, restoreView } from './routes.common';
import {
  Backup,
  BackupParams,
  Connection,
  CreateManagedDatabaseRequest,
  CreateServiceDatabaseRequest,
  Database,
  DatabaseIdParams,
  DatabaseList,
  DatabaseListQuery,
  DeploymentIdParams,
  LinkList,
  LinkParams,
  LinkRequest,
  PageQuery,
  Restore,
  ServiceBackupParams,
  ServiceDatabaseParams,
  SnapshotList,
  SnapshotParams,
} from './schemas';
import { backupView, databaseView } from './views';

const ServiceCreated = z
  .object({
    database: Database,
    envName: z.string().meta({ description: 'The variable the app reads the URL from, in the release being shipped' }),
    release: z.unknown().meta({ description: 'The new release shipping the env reference, as a redeploy answers' }),
  })
  .meta({ id: 'ServiceDatabaseCreated' });

const Linked = z
  .object({
    database: Database,
    deploymentId: z.string(),
    envName: z.string().optional(),
    release: z.unknown().meta({ description: 'The new release shipping the change, as a redeploy answers' }),
  })
  .meta({ id: 'DatabaseLinked' });

/**
 * Databases: services beside one deployment (`/deployments/:id/databases…`) and a project's managed databases
 * (`/databases…`). One implementation serves both: `/databases/:id…` reads, backs up, restores and deletes either kind.
 */
export function databaseRoutes(
  ctx: Pick<DatabasesContext, 'databases' | 'backups' | 'deployments' | 'can'>,
): RouteDef[] {
  const { databases, backups, deployments, can } = ctx;
  const serviceTags = ['Databases'];
  const managedTags = ['Databases'];
  const ofDeployment = deploymentProject(deployments);
  const ofDatabase = databaseProject(databases);

  const service = {
    prefix: '/deployments/:id/databases/:dbId',
    params: ServiceDatabaseParams,
    backupParams: ServiceBackupParams,
    find: (principal: Parameters<typeof databases.get>[0], p: Record<string, string>) =>
      databases.getService(principal, p.id!, p.dbId!),
    can: (permission: Parameters<typeof can>[0]) => can(permission, ofDeployment),
    tags: serviceTags,
  };
  const managed = {
    prefix: '/databases/:id',
    params: DatabaseIdParams,
    backupParams: BackupParams,
    find: (principal: Parameters<typeof databases.get>[0], p: Record<string, string>) =>
      databases.get(principal, p.id!),
    can: (permission: Parameters<typeof can>[0]) => can(permission, ofDatabase),
    tags: managedTags,
  };

  return [
    route({
      method: 'post',
      path: '/deployments/:id/databases',
      summary: 'Create a database beside this deployment; its URL reaches the app’s env as a new release',
      description:
        'Generates credentials, starts the server (its data on storage of sizeGb, reached only by this organisation’s containers at the internal host name), and ships a new release of the deployment with envName (DATABASE_URL, or REDIS_URL for redis) referring to it; the value is sealed like every env value and its instances start once the database is ready. Destroying the deployment destroys its databases unless keepDatabases=true.',
      tags: serviceTags,
      request: { params: DeploymentIdParams, body: CreateServiceDatabaseRequest },
      before: [can('database.create', ofDeployment), can('deployment.manage', ofDeployment)],
      responses: {
        201: { description: 'The database (creating) and the release shipping it', schema: success(ServiceCreated) },
        404: { description: 'DEPLOYMENT_NOT_FOUND' },
        409: {
          description:
            'CONFLICT: a database of that name, or an env variable of that name, exists; or the deployment cannot take a release now',
        },
        429: { description: 'QUOTA_EXCEEDED: the plan’s database count or total size would be passed' },
      },
      audit: { idField: 'database.id' },
      handler: async ({ params, body }, req, res) => {
        const r = await databases.createService(principalOf(req), params.id, body);
        res.status(201).json(ok({ database: databaseView(r.database), envName: r.envName, release: r.release }));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/databases',
      summary: 'The deployment’s databases',
      tags: serviceTags,
      request: { params: DeploymentIdParams, query: PageQuery },
      before: [can('database.read', ofDeployment)],
      responses: {
        200: { description: 'A page of databases', schema: success(DatabaseList) },
        404: { description: 'DEPLOYMENT_NOT_FOUND' },
      },
      handler: async ({ params, query }, req, res) => {
        await deployments.status(principalOf(req), params.id);
        const { items, total } = await databases.list(principalOf(req), { ...query, deploymentId: params.id });
        res.json(ok({ databases: items.map(databaseView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/databases/:dbId',
      summary: 'One of the deployment’s databases',
      tags: serviceTags,
      request: { params: ServiceDatabaseParams },
      before: [can('database.read', ofDeployment)],
      responses: {
        200: { description: 'The database', schema: success(Database) },
        404: { description: 'DEPLOYMENT_NOT_FOUND or DATABASE_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(databaseView(await databases.getService(principalOf(req), params.id, params.dbId))));
      },
    }),
    route({
      method: 'delete',
      path: '/deployments/:id/databases/:dbId',
      summary:
        'Delete one of the deployment’s databases, its data and its backups; its env variable leaves in a new release',
      tags: serviceTags,
      request: { params: ServiceDatabaseParams },
      before: [can('database.delete', ofDeployment), can('deployment.manage', ofDeployment)],
      responses: {
        202: { description: 'Being deleted', schema: success(Database) },
        404: { description: 'DEPLOYMENT_NOT_FOUND or DATABASE_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        const p = principalOf(req);
        const d = await databases.getService(p, params.id, params.dbId);
        await backups.dropSchedule(d._id);
        res.status(202).json(ok(databaseView(await databases.remove(p, d))));
      },
    }),
    ...backupRoutes(service, backups),

    route({
      method: 'post',
      path: '/databases',
      summary: 'Create a managed database in a project; link it to the project’s deployments',
      description:
        'Generates credentials and starts the server, its data on storage of sizeGb, reached only by this organisation’s containers at the internal host name. POST /databases/{id}/links gives a deployment its URL; GET /databases/{id}/connection (database.reveal) reads the credentials.',
      tags: managedTags,
      request: { body: CreateManagedDatabaseRequest },
      before: [
        can('database.create', {
          project: (req) => (req.body as { projectId?: unknown } | undefined)?.projectId as string | undefined,
        }),
      ],
      responses: {
        201: { description: 'The database, being started', schema: success(Database) },
        404: { description: 'PROJECT_NOT_FOUND' },
        409: { description: 'CONFLICT: a managed database of that name exists' },
        429: { description: 'QUOTA_EXCEEDED' },
      },
      handler: async ({ body }, req, res) => {
        res.status(201).json(ok(databaseView(await databases.createManaged(principalOf(req), body))));
      },
    }),
    route({
      method: 'get',
      path: '/databases',
      summary: 'List databases: managed ones and deployments’ services (kind), of the projects you can see',
      tags: managedTags,
      request: { query: DatabaseListQuery },
      before: [can('database.read')],
      responses: { 200: { description: 'A page of databases', schema: success(DatabaseList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await databases.list(principalOf(req), query);
        res.json(ok({ databases: items.map(databaseView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/databases/:id',
      summary: 'A database and where it stands',
      tags: managedTags,
      request: { params: DatabaseIdParams },
      before: [can('database.read', ofDatabase)],
      responses: {
        200: { description: 'The database', schema: success(Database) },
        404: { description: 'DATABASE_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(databaseView(await databases.get(principalOf(req), params.id))));
      },
    }),
    route({
      method: 'delete',
      path: '/databases/:id',
      summary: 'Delete a database, its data and its backups; refused while it is linked to a deployment',
      tags: managedTags,
      request: { params: DatabaseIdParams },
      before: [can('database.delete', ofDatabase)],
      responses: {
        202: { description: 'Being deleted', schema: success(Database) },
        404: { description: 'DATABASE_NOT_FOUND' },
        409: { description: 'CONFLICT: still linked (the deployments are named)' },
      },
      handler: async ({ params }, req, res) => {
        const p = principalOf(req);
        const d = await databases.get(p, params.id);
        const removed = await databases.remove(p, d);
        await backups.dropSchedule(d._id);
        res.status(202).json(ok(databaseView(removed)));
      },
    }),
    route({
      method: 'post',
      path: '/databases/:id/links',
      summary: 'Give a deployment of the project this database’s URL as envName, shipped as a new release',
      tags: managedTags,
      request: { params: DatabaseIdParams, body: LinkRequest },
      before: [can('database.create', ofDatabase)],
      responses: {
        202: { description: 'Linked; the release shipping it', schema: success(Linked) },
        404: { description: 'DATABASE_NOT_FOUND or DEPLOYMENT_NOT_FOUND' },
        409: {
          description: 'CONFLICT: not a managed database, another project’s deployment, or the env name is taken',
        },
      },
      handler: async ({ params, body }, req, res) => {
        const r = await databases.link(principalOf(req), params.id, body);
        res.status(202).json(
          ok({
            database: databaseView(r.database),
            deploymentId: r.deploymentId,
            envName: r.envName,
            release: r.release,
          }),
        );
      },
    }),
    route({
      method: 'get',
      path: '/databases/:id/links',
      summary: 'The deployments this database serves, and the env variable each reads it from',
      tags: managedTags,
      request: { params: DatabaseIdParams },
      before: [can('database.read', ofDatabase)],
      responses: {
        200: { description: 'Its links', schema: success(LinkList) },
        404: { description: 'DATABASE_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok({ links: await databases.links(principalOf(req), params.id) }));
      },
    }),
    route({
      method: 'delete',
      path: '/databases/:id/links/:deploymentId',
      summary: 'Take the database’s URL off a deployment, shipped as a new release',
      tags: managedTags,
      request: { params: LinkParams },
      before: [can('database.delete', ofDatabase)],
      responses: {
        202: { description: 'Unlinked; the release shipping it', schema: success(Linked) },
        404: { description: 'DATABASE_NOT_FOUND or LINK_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        const r = await databases.unlink(principalOf(req), params.id, params.deploymentId);
        res
          .status(202)
          .json(ok({ database: databaseView(r.database), deploymentId: r.deploymentId, release: r.release }));
      },
    }),
    route({
      method: 'get',
      path: '/databases/:id/connection',
      summary: 'The database’s credentials and URL (database.reveal; every read is audited)',
      description:
        'Host and port are internal: only this organisation’s deployments reach them. Needs database.reveal, a permission apart (org owners and admins, and project admins inside their project); every call appends database.reveal to the audit trail.',
      tags: managedTags,
      request: { params: DatabaseIdParams },
      before: [can('database.reveal', ofDatabase)],
      responses: {
        200: { description: 'The credentials', schema: success(Connection) },
        404: { description: 'DATABASE_NOT_FOUND' },
      },
      audit: { action: 'database.reveal', resource: 'database' },
      handler: async ({ params }, req, res) => {
        res.set('Cache-Control', 'no-store');
        res.json(ok(await databases.connection(principalOf(req), params.id)));
      },
    }),
    ...backupRoutes(managed, backups),
    route({
      method: 'post',
      path: '/databases/:id/snapshots',
      summary: 'Snapshot a managed database: a dump kept until deleted, restorable as a new managed database',
      tags: managedTags,
      request: { params: DatabaseIdParams },
      before: [can('database.backup', ofDatabase)],
      responses: {
        202: { description: 'The snapshot, running', schema: success(Backup) },
        404: { description: 'DATABASE_NOT_FOUND' },
        409: { description: 'CONFLICT: not ready, or not a managed database' },
      },
      handler: async ({ params }, req, res) => {
        const p = principalOf(req);
        const d = await databases.get(p, params.id);
        res.status(202).json(ok(backupView(await backups.snapshot(p, d))));
      },
    }),
    route({
      method: 'get',
      path: '/databases/:id/snapshots',
      summary: 'The database’s snapshots, newest first',
      tags: managedTags,
      request: { params: DatabaseIdParams, query: PageQuery },
      before: [can('database.read', ofDatabase)],
      responses: {
        200: { description: 'A page of snapshots', schema: success(SnapshotList) },
        404: { description: 'DATABASE_NOT_FOUND' },
      },
      handler: async ({ params, query }, req, res) => {
        const d = await databases.get(principalOf(req), params.id);
        const { items, total } = await backups.listSnapshots(d, query);
        res.json(ok({ snapshots: items.map(backupView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'post',
      path: '/databases/:id/snapshots/:snapshotId/restore',
      summary: 'Restore a snapshot as a new managed database (checked against its SHA-256 first)',
      tags: managedTags,
      request: {
        params: SnapshotParams,
        body: z.object({ name: CreateManagedDatabaseRequest.shape.name.optional() }).strict(),
      },
      before: [can('database.restore', ofDatabase)],
      responses: {
        202: { description: 'The restore, running', schema: success(Restore) },
        404: { description: 'DATABASE_NOT_FOUND or BACKUP_NOT_FOUND' },
        409: { description: 'CONFLICT: the snapshot is not complete' },
        429: { description: 'QUOTA_EXCEEDED' },
      },
      handler: async ({ params, body }, req, res) => {
        const p = principalOf(req);
        const d = await databases.get(p, params.id);
        res.status(202).json(ok(restoreView(await backups.restoreSnapshot(p, d, params.snapshotId, body))));
      },
    }),
    route({
      method: 'delete',
      path: '/databases/:id/snapshots/:snapshotId',
      summary: 'Delete a snapshot and its object',
      tags: managedTags,
      request: { params: SnapshotParams },
      before: [can('database.delete', ofDatabase)],
      responses: { 204: { description: 'Deleted' }, 404: { description: 'DATABASE_NOT_FOUND or BACKUP_NOT_FOUND' } },
      handler: async ({ params }, req, res) => {
        const d = await databases.get(principalOf(req), params.id);
        await backups.deleteSnapshot(d, params.snapshotId);
        res.status(204).end();
      },
    }),
  ];
}
