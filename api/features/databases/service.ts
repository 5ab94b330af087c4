import { randomUUID } from 'node:crypto';

import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateStage,
} from '@temporalio/client';

import type { Authz } from '@shared/authz/authorize';
import {
  DATABASE_WORKFLOW,
  databaseWorkflowId,
  type DatabaseWorkflowInput,
  deleteDatabaseUpdate,
} from '@shared/contracts/database';
import type { CredentialSealer } from '@shared/databases/credentials';
import {
  connectionUrl,
  type DatabaseEngine,
  databaseHost,
  DEFAULT_ENV_NAME,
  ENGINE_PORT,
  generateCredentials,
} from '@shared/databases/engines';
import type { DatabaseStore } from '@shared/databases/store';
import type { DatabaseKind, DatabaseRecord } from '@shared/databases/types';
import { databaseWorkflowVisibility } from '@shared/databases/visibility';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { ignore } from '@shared/ignore';
import type { KeyedLock } from '@shared/locks';
import { PLAN_POLICIES } from '@shared/plans';
import type { ProjectStore } from '@shared/projects/store';
import { currentRequestId } from '@shared/request-context';
import { isWaitOver } from '@shared/temporal';

import { insertWithinPlan, listVisible } from '../owned';

/** What databases need of deployments: finding one the caller may change, and its env references to databases. */
export interface DeploymentHooks {
  /** The deployment, or DEPLOYMENT_NOT_FOUND (another organisation's, or one the caller cannot see, alike). */
  get(
    principal: Principal,
    deploymentId: string,
  ): Promise<{ _id: string; name: string; projectId?: string | null; provider: string }>;
  /** Puts `envName` → the database's URL on the deployment, shipped as a new release; answers the command's view. */
  addDatabaseRef(principal: Principal, deploymentId: string, envName: string, databaseId: string): Promise<unknown>;
  /** Takes `envName` off the deployment, shipped as a new release. */
  removeDatabaseRef(principal: Principal, deploymentId: string, envName: string): Promise<unknown>;
  /** The deployments (and names) whose env refers to the database. */
  refsTo(orgId: string, databaseId: string): Promise<{ deploymentId: string; name: string }[]>;
}

export interface DatabaseServiceDeps {
  store: DatabaseStore;
  sealer: CredentialSealer;
  projects: Pick<ProjectStore, 'get'>;
  authz: Pick<Authz, 'visibility' | 'sees'>;
  deployments: DeploymentHooks;
  temporal: Client;
  lock: KeyedLock;
  taskQueue: string;
  quotaMultiplier: number;
  acceptWaitMs: number;
}

export const databaseNotFound = (id: string) =>
  new AppError(
    'DATABASE_NOT_FOUND',
    `No database ${id} here; list them with GET /platform/databases or GET /platform/deployments/{id}/databases.`,
    { databaseId: id },
  );

const nameKeyOf = (orgId: string, scope: string, name: string) => `${orgId}/${scope}/${name}`;

/**
 * Databases as the api keeps them (docs/architecture.md, "Databases"): one implementation for a deployment's services
 * and a project's managed databases. The record (with sealed credentials) and the database's workflow
 * (`database/<id>`), which starts its server, holds it while it exists and removes it on delete. Plan limits are
 * checked under a per-organisation lock, as volumes' are.
 */
export function createDatabaseService(deps: DatabaseServiceDeps) {
  const { store } = deps;

  async function get(principal: Principal, id: string): Promise<DatabaseRecord> {
    const d = await store.get(principal.org._id, id);
    if (!d) throw databaseNotFound(id);
    return d;
  }

  /** A deployment's database, by both IDs: a database of another deployment reads as unknown. */
  async function getService(principal: Principal, deploymentId: string, id: string): Promise<DatabaseRecord> {
    const d = await get(principal, id);
    if (d.deploymentId !== deploymentId) throw databaseNotFound(id);
    return d;
  }

  async function startWorkflow(d: DatabaseRecord, principal: Principal): Promise<void> {
    const input: DatabaseWorkflowInput = {
      databaseId: d._id,
      orgId: d.orgId,
      engine: d.engine,
      sizeGb: d.sizeGb,
      volumeId: d.volumeId,
    };
    try {
      await deps.temporal.workflow.start(DATABASE_WORKFLOW, {
        taskQueue: deps.taskQueue,
        workflowId: databaseWorkflowId(d._id),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
        args: [input],
        ...databaseWorkflowVisibility(d, principal.org),
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  /** A new record (status creating), within the plan's count and total size; the caller starts what it needs. */
  async function insertRecord(
    principal: Principal,
    spec: {
      kind: DatabaseKind;
      engine: DatabaseEngine;
      name: string;
      sizeGb: number;
      projectId: string | null;
      deploymentId: string | null;
      restoredFrom?: { backupId: string };
    },
  ): Promise<DatabaseRecord> {
    const orgId = principal.org._id;
    const plan = PLAN_POLICIES[principal.org.plan].databases;
    const limits = {
      maxCount: plan.maxCount * deps.quotaMultiplier,
      maxTotalGb: plan.maxTotalGb * deps.quotaMultiplier,
    };
    const id = randomUUID();
    const now = new Date();
    const record: DatabaseRecord = {
      _id: id,
      orgId,
      projectId: spec.projectId,
      kind: spec.kind,
      deploymentId: spec.deploymentId,
      engine: spec.engine,
      name: spec.name,
      nameKey: nameKeyOf(orgId, spec.deploymentId ?? 'managed', spec.name),
      sizeGb: spec.sizeGb,
      volumeId: randomUUID(),
      host: databaseHost(id),
      port: ENGINE_PORT[spec.engine],
      credentialsSealed: deps.sealer.seal({ _id: id, orgId }, generateCredentials(spec.engine)),
      status: 'creating',
      error: null,
      ...(spec.restoredFrom ? { restoredFrom: spec.restoredFrom } : {}),
      createdBy: principal.user._id,
      createdAt: now,
      updatedAt: now,
    };
    await insertWithinPlan({
      lock: deps.lock,
      key: `databases:${orgId}`,
      what: 'database quota',
      over: async () => {
        const usage = await store.usage(orgId);
        if (usage.count + 1 <= limits.maxCount && usage.totalGb + spec.sizeGb <= limits.maxTotalGb) return undefined;
        return new AppError(
          'QUOTA_EXCEEDED',
          `The ${principal.org.plan} plan allows ${limits.maxCount} databases of ${limits.maxTotalGb} GB in all; this organisation has ${usage.count} of ${usage.totalGb} GB, so ${spec.sizeGb} GB more is refused: delete a database or choose a smaller size.`,
          { ...limits, count: usage.count, totalGb: usage.totalGb },
        );
      },
      insert: () => store.insert(record),
      taken: () =>
        new AppError(
          'CONFLICT',
          spec.deploymentId
            ? `This deployment has a database named ${spec.name}; choose another name (the name field) or use that one.`
            : `A managed database named ${spec.name} exists in this organisation; choose another name or use that one.`,
          { name: spec.name },
        ),
    });
    return record;
  }

  async function projectOf(principal: Principal, projectId: string): Promise<void> {
    if (!(await deps.projects.get(principal.org._id, projectId)))
      throw new AppError('PROJECT_NOT_FOUND', `No project ${projectId} in this organisation.`, { projectId });
  }

  /** Asks the database's workflow to go; answered once it took the request (or after the wait). */
  async function askDelete(principal: Principal, d: DatabaseRecord): Promise<void> {
    const ask = () =>
      deps.temporal.workflow.withDeadline(new Date(Date.now() + deps.acceptWaitMs), () =>
        deps.temporal.workflow.getHandle(databaseWorkflowId(d._id)).startUpdate(deleteDatabaseUpdate, {
          updateId: `delete:${currentRequestId() ?? randomUUID()}`,
          waitForStage: WorkflowUpdateStage.ACCEPTED,
        }),
      );
    try {
      await ask().catch(async (err: unknown) => {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
        await startWorkflow(d, principal);
        await ask();
      });
    } catch (err) {
      if (!isWaitOver(err)) throw err;
    }
  }

  return {
    get,
    getService,
    insertRecord,
    startWorkflow,

    /**
     * A database beside one deployment: the record, its workflow (server and storage), and the env reference that
     * gives the app its URL, shipped as a new release. The release's instances wait for the database to be ready.
     */
    async createService(
      principal: Principal,
      deploymentId: string,
      body: { engine: DatabaseEngine; name?: string | undefined; sizeGb: number; envName?: string | undefined },
    ): Promise<{ database: DatabaseRecord; envName: string; release: unknown }> {
      const deployment = await deps.deployments.get(principal, deploymentId);
      // The server runs on this engine's network, which only this engine's containers reach.
      if (deployment.provider !== 'engine_local')
        throw new AppError(
          'INVALID_REQUEST',
          `A database beside a deployment runs on this server's engine, which deployment ${deploymentId} on ${deployment.provider} cannot reach; use the cloud's own database service and give its URL as an env value.`,
          { deploymentId, provider: deployment.provider },
        );
      const record = await insertRecord(principal, {
        kind: 'service',
        engine: body.engine,
        name: body.name ?? body.engine,
        sizeGb: body.sizeGb,
        projectId: deployment.projectId ?? null,
        deploymentId,
      });
      const envName = body.envName ?? DEFAULT_ENV_NAME[body.engine];
      let release: unknown;
      try {
        await startWorkflow(record, principal);
        release = await deps.deployments.addDatabaseRef(principal, deploymentId, envName, record._id);
      } catch (err) {
        // The app was not given the database: it goes again, rather than stay unreachable and counted.
        await askDelete(principal, record).catch(
          ignore('the record stays creating and the client was told the create failed; a DELETE removes it'),
        );
        throw err;
      }
      return { database: record, envName, release };
    },

    /** A project's database, served to the deployments linked to it. */
    async createManaged(
      principal: Principal,
      body: { projectId: string; engine: DatabaseEngine; name: string; sizeGb: number },
    ): Promise<DatabaseRecord> {
      await projectOf(principal, body.projectId);
      const record = await insertRecord(principal, {
        kind: 'managed',
        engine: body.engine,
        name: body.name,
        sizeGb: body.sizeGb,
        projectId: body.projectId,
        deploymentId: null,
      });
      await startWorkflow(record, principal);
      return record;
    },

    async list(
      principal: Principal,
      q: {
        limit: number;
        offset: number;
        projectId?: string | undefined;
        kind?: DatabaseKind | undefined;
        deploymentId?: string | undefined;
      },
    ) {
      return listVisible(deps.authz, principal, q, (filter) =>
        store.list(principal.org._id, {
          ...filter,
          ...(q.kind ? { kind: q.kind } : {}),
          ...(q.deploymentId ? { deploymentId: q.deploymentId } : {}),
        }),
      );
    },

    /** Links a managed database to a deployment of its project under `envName`, shipped as a new release. */
    async link(principal: Principal, id: string, body: { deploymentId: string; envName?: string | undefined }) {
      const d = await get(principal, id);
      if (d.kind !== 'managed')
        throw new AppError(
          'CONFLICT',
          `Database ${d.name} belongs to deployment ${d.deploymentId} alone; link a managed database instead (POST /platform/databases).`,
          { databaseId: id },
        );
      const deployment = await deps.deployments.get(principal, body.deploymentId);
      if ((deployment.projectId ?? null) !== d.projectId)
        throw new AppError(
          'CONFLICT',
          `Deployment ${deployment.name} is not in project ${d.projectId}, which database ${d.name} belongs to; a managed database serves its own project's deployments.`,
          { databaseId: id, deploymentId: body.deploymentId },
        );
      const envName = body.envName ?? DEFAULT_ENV_NAME[d.engine];
      const release = await deps.deployments.addDatabaseRef(principal, body.deploymentId, envName, id);
      return { database: d, deploymentId: body.deploymentId, envName, release };
    },

    async unlink(principal: Principal, id: string, deploymentId: string) {
      const d = await get(principal, id);
      const refs = (await deps.deployments.refsTo(d.orgId, id)).filter((r) => r.deploymentId === deploymentId);
      if (refs.length === 0)
        throw new AppError('LINK_NOT_FOUND', `Database ${d.name} serves no deployment ${deploymentId}.`, {
          databaseId: id,
          deploymentId,
        });
      let release: unknown;
      for (const r of refs) release = await deps.deployments.removeDatabaseRef(principal, deploymentId, r.name);
      return { database: d, deploymentId, release };
    },

    links: async (principal: Principal, id: string) => {
      const d = await get(principal, id);
      return (await deps.deployments.refsTo(d.orgId, d._id)).map((r) => ({
        deploymentId: r.deploymentId,
        envName: r.name,
      }));
    },

    /** The credentials, opened for a caller with database.reveal (the route audits every call). */
    async connection(principal: Principal, id: string) {
      const d = await get(principal, id);
      const c = deps.sealer.open(d);
      return {
        host: d.host,
        port: d.port,
        user: c.user,
        password: c.password,
        database: c.database,
        url: connectionUrl(d.engine, d.host, c),
      };
    },

    /**
     * Deletes a database, its server, its storage and its backups. A managed database still linked is refused, naming
     * the deployments; a service first leaves its deployment's env (a new release without it).
     */
    async remove(principal: Principal, d: DatabaseRecord): Promise<DatabaseRecord> {
      const refs = await deps.deployments.refsTo(d.orgId, d._id);
      if (d.kind === 'managed' && refs.length > 0)
        throw new AppError(
          'CONFLICT',
          `Database ${d.name} still serves ${refs.map((r) => `deployment ${r.deploymentId} (as ${r.name})`).join(', ')}; unlink it first: DELETE /platform/databases/${d._id}/links/{deploymentId}.`,
          { databaseId: d._id, links: refs },
        );
      for (const r of refs) await deps.deployments.removeDatabaseRef(principal, r.deploymentId, r.name);
      await askDelete(principal, d);
      return { ...d, status: 'deleting', updatedAt: new Date() };
    },
  };
}

export type DatabaseService = ReturnType<typeof createDatabaseService>;
