import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type Docker from 'dockerode';
import { v4 as uuidv4, v5 as uuidv5 } from 'uuid';

import type { Authz } from '@shared/authz/authorize';
import type { GitSourceCheck } from '@shared/build/git-source';
import type { Config } from '@shared/config';
import { LABELS } from '@shared/constants';
import {
  DEPLOYMENT_WORKFLOW,
  deploymentWorkflowId,
  type DeploymentWorkflowInput,
  destroySignal,
} from '@shared/contracts/deployment';
import { isDuplicateKey } from '@shared/db/mongo';
import { deploymentNotFound } from '@shared/deployments/errors';
import type { LogStore } from '@shared/deployments/logs-store';
import type { StatusFeed } from '@shared/deployments/status-feed';
import type { DeploymentStore } from '@shared/deployments/store';
import {
  type DeploymentRecord,
  type DeploymentSource,
  type DeploymentStatus,
  envNamesOf,
  type Provider,
} from '@shared/deployments/types';
import { type LogLine, readContainerLogs } from '@shared/engine/logs';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { imageDeployRefusal } from '@shared/images/registry-guard';
import type { Logger } from '@shared/logger';
import { PLAN_POLICIES } from '@shared/plans';
import type { ProjectStore } from '@shared/projects/store';
import { currentRequestId, logFailure } from '@shared/request-context';
import type { EnvSealer } from '@shared/secrets/deployment-env';
import type { SecretEnvironment } from '@shared/secrets/store';
import type { UploadStore } from '@shared/uploads/store';

import { createDeploymentCommands } from './commands';
import { providerAvailability } from './providers';
import type { Quota } from './quota';
import { deploymentSummary, workflowVisibility } from './visibility';

/** Namespace of idempotent deployment IDs: uuidv5(orgId + ":" + idempotencyKey). */
const IDEMPOTENCY_NAMESPACE = '8f1d7a52-4c1e-4f7e-9a3b-2d5c6e7f8a90';

export interface DeployInput {
  name: string;
  port: number;
  envVars: Record<string, string>;
  /** The body's `requestId` (its name on the wire): a retry with the same key names the same deployment. */
  idempotencyKey?: string;
  provider: Provider;
  projectId?: string;
  /** Instances of the first release (platform API); 1 when absent. */
  replicas?: number;
}

/** A source deploy's fields: exactly one of uploadId and repoUrl (the route's schema holds that). */
export interface SourceInput {
  uploadId?: string;
  repoUrl?: string;
  branch?: string;
  gitTokenSecretId?: string;
  vaultEnvironment?: SecretEnvironment;
  dockerfilePath?: string;
}

/** A redeploy's body as the route parsed it: a new env, a new source, or both. */
export interface RedeployChange {
  envVars?: Record<string, string>;
  image?: string;
  uploadId?: string;
  /** Every field optional: what is left out comes from the deployment's own repository, or its project's. */
  git?: Pick<SourceInput, 'repoUrl' | 'branch' | 'gitTokenSecretId' | 'vaultEnvironment'> & { commit?: string };
  dockerfilePath?: string;
}

/** The build options a deployment's source carries, which new code built for it keeps unless told otherwise. */
const buildOptionsOf = (source: DeploymentSource): { dockerfilePath?: string } =>
  source.type !== 'image' && source.dockerfilePath ? { dockerfilePath: source.dockerfilePath } : {};

export interface DeploymentServiceDeps {
  store: DeploymentStore;
  logs: LogStore;
  /** Tells the event streams and `?wait=` reads of a deployment that it was destroyed. */
  feed: Pick<StatusFeed, 'publish'>;
  uploads: Pick<UploadStore, 'get'>;
  /** A deploy's projectId must name a project of the caller's organisation. */
  projects: Pick<ProjectStore, 'get' | 'memberRole' | 'projectIdsOf'>;
  /** Which projects' deployments a caller's lists show. */
  authz: Pick<Authz, 'visibility'>;
  /** Seals a deploy's environment values (and opens them for a rollback's redeploy). */
  env: EnvSealer;
  /** The rules a source deploy's repository and Git token are held to. */
  git: GitSourceCheck;
  temporal: Client;
  docker: Docker;
  log: Pick<Logger, 'warn'>;
  quota: Pick<Quota, 'acquire' | 'confirm'>;
  config: Pick<
    Config,
    | 'DEPLOY_READY_TIMEOUT_S'
    | 'RELEASES_KEPT'
    | 'DEPLOYMENT_COMMANDS_PER_RUN'
    | 'TEMPORAL_TASK_QUEUE'
    | 'QUOTA_MULTIPLIER'
    | 'BUILD_TIMEOUT_S'
    | 'ALLOW_PRIVATE_REGISTRIES'
  >;
}

const notFound = deploymentNotFound;

/** How long a DELETE waits on Temporal; past it, the destroy intent already written is the reconciler's to finish. */
const DESTROY_SIGNAL_DEADLINE_MS = 10_000;

export function createDeploymentService(deps: DeploymentServiceDeps) {
  const { store, temporal, env, git } = deps;

  /** The workflow's options: where it runs, how an operator finds it (visibility.ts; the request ID in the memo). */
  function workflowOptions(record: DeploymentRecord, principal: Pick<Principal, 'org'>) {
    const requestId = currentRequestId();
    return {
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
      workflowId: deploymentWorkflowId(record._id),
      workflowIdReusePolicy: 'REJECT_DUPLICATE' as const,
      args: [workflowInput(record, principal)] as [DeploymentWorkflowInput],
      ...workflowVisibility(record, principal.org),
      ...(requestId ? { memo: { requestId } } : {}),
    };
  }

  function workflowInput(record: DeploymentRecord, principal: Pick<Principal, 'org'>): DeploymentWorkflowInput {
    return {
      deploymentId: record._id,
      orgId: record.orgId,
      source: record.source,
      port: record.port,
      // Names only: the values stay sealed in the record, and the worker opens them where it starts the container.
      envNames: envNamesOf(record),
      revision: record.revision,
      limits: PLAN_POLICIES[principal.org.plan].limits,
      readyTimeoutS: deps.config.DEPLOY_READY_TIMEOUT_S,
      buildTimeoutS: deps.config.BUILD_TIMEOUT_S,
      releasesKept: deps.config.RELEASES_KEPT,
      commandsPerRun: deps.config.DEPLOYMENT_COMMANDS_PER_RUN,
      summary: deploymentSummary(record, principal.org),
      ...(record.replicas !== undefined ? { replicas: record.replicas } : {}),
      version: record.version,
    };
  }

  /**
   * Starts the record's workflow unless its ID was ever used: a destroyed deployment is never re-run,
   * and a concurrent start of the same record is the same workflow.
   */
  async function ensureWorkflow(record: DeploymentRecord, principal: Pick<Principal, 'org'>): Promise<void> {
    try {
      await temporal.workflow.start(DEPLOYMENT_WORKFLOW, workflowOptions(record, principal));
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  /** With an idempotency key, the deployment's ID is fixed by it: the same request always names the same deployment. */
  const idFor = (principal: Pick<Principal, 'org'>, idempotencyKey: string) =>
    uuidv5(`${principal.org._id}:${idempotencyKey}`, IDEMPOTENCY_NAMESPACE);

  async function duplicate(principal: Principal, id: string, idempotencyKey: string): Promise<never> {
    // The first request may have died between its insert and its workflow start: finish it, start nothing new.
    const first = await store.findAny(id);
    if (first && !first.destroyedAt) await ensureWorkflow(first, principal);
    // The message and details name the key by its body field, the name the caller knows.
    throw new AppError(
      'DUPLICATE_REQUEST',
      `requestId "${idempotencyKey}" was already used: it made deployment ${id}, and no second deployment was started. ` +
        'Follow that deployment, or send a new requestId to deploy again.',
      { deploymentId: id, requestId: idempotencyKey },
    );
  }

  /** Last step before the insert: takes the deployment's quota slot (atomic in Redis, see ./quota.ts). */
  async function checkPolicy(principal: Principal, provider: Provider, projectId: string | undefined, id: string) {
    const availability = providerAvailability(principal.org.plan).find((p) => p.id === provider)!;
    if (!availability.available) {
      throw new AppError('PROVIDER_NOT_ALLOWED', `Provider ${provider} is not available: ${availability.reason}.`, {
        provider,
        plan: principal.org.plan,
      });
    }
    if (projectId !== undefined && !(await deps.projects.get(principal.org._id, projectId))) {
      throw new AppError('PROJECT_NOT_FOUND', `No project ${projectId} in this organisation.`, { projectId });
    }
    const limit = PLAN_POLICIES[principal.org.plan].maxLiveDeployments * deps.config.QUOTA_MULTIPLIER;
    const { admitted, held: live } = await deps.quota.acquire(principal.org._id, id, limit);
    if (!admitted) {
      throw new AppError(
        'QUOTA_EXCEEDED',
        `The ${principal.org.plan} plan allows ${limit} live deployments; destroy one first.`,
        {
          plan: principal.org.plan,
          limit,
          live,
        },
      );
    }
  }

  /** Writes the queued record, then starts its workflow; returns as soon as both are durable. */
  async function create(
    principal: Principal,
    input: DeployInput,
    source: DeploymentSource,
    origin: DeploymentRecord['origin'],
  ) {
    const orgId = principal.org._id;
    const id = input.idempotencyKey ? idFor(principal, input.idempotencyKey) : uuidv4();
    // Replays are answered before the routes spend a creation budget (refuseReplay); this catches the one that
    // overtook its first request, and the insert's unique ID catches two at once.
    if (input.idempotencyKey && (await store.findAny(id))) await duplicate(principal, id, input.idempotencyKey);
    const maxReplicas = PLAN_POLICIES[principal.org.plan].maxReplicas;
    if (input.replicas !== undefined && (input.replicas < 1 || input.replicas > maxReplicas))
      throw new AppError(
        'INVALID_REQUEST',
        `replicas must be a whole number from 1 to ${maxReplicas} on the ${principal.org.plan} plan.`,
        { replicas: input.replicas, maxReplicas },
      );
    await checkPolicy(principal, input.provider, input.projectId, id);
    const now = new Date();
    const record: DeploymentRecord = {
      _id: id,
      orgId,
      createdBy: principal.user._id,
      origin,
      name: input.name,
      provider: input.provider,
      source,
      port: input.port,
      envNames: Object.keys(input.envVars).sort(),
      ...(Object.keys(input.envVars).length ? { envSealed: env.seal({ _id: id, orgId }, input.envVars) } : {}),
      ...(input.idempotencyKey ? { idempotencyKey: input.idempotencyKey } : {}),
      ...(input.projectId ? { projectId: input.projectId } : {}),
      // What the first release runs; the workflow writes what actually runs from then on.
      ...(input.replicas !== undefined ? { replicas: input.replicas } : {}),
      revision: 1,
      status: 'queued',
      version: 1,
      events: [{ status: 'queued', message: 'deployment accepted', at: now }],
      createdAt: now,
      updatedAt: now,
    };
    try {
      await store.insert(record);
    } catch (err) {
      if (isDuplicateKey(err) && input.idempotencyKey) await duplicate(principal, id, input.idempotencyKey);
      throw err;
    }
    await ensureWorkflow(record, principal);
    // Its workflow exists: the slot holds past its lease. A lost confirm costs one Temporal lookup when pruning.
    await deps.quota
      .confirm(orgId, id)
      .catch(
        logFailure(deps.log, 'quota slot not confirmed; pruning will ask Temporal about it', { deploymentId: id }),
      );
    return record;
  }

  async function get(principal: Principal, id: string): Promise<DeploymentRecord> {
    const record = await store.get(principal.org._id, id);
    if (!record) throw notFound(id);
    return record;
  }

  /** An image to run, refused here when its registry may not be used (the engine checks ownership when it pulls). */
  async function imageSource(image: string): Promise<DeploymentSource> {
    const refused = await imageDeployRefusal(image, { allowPrivateRegistries: deps.config.ALLOW_PRIVATE_REGISTRIES });
    if (refused) throw new AppError('INVALID_REQUEST', refused, { image });
    return { type: 'image', image };
  }

  /**
   * A source to build, checked: the upload is the organisation's and unexpired, or the repository and its token pass
   * the Git rules. `unknownUpload` is the code an upload the caller cannot have gets: a first deploy has always called
   * it an invalid request; a redeploy, which names an existing resource, says not found.
   */
  async function builtSource(
    principal: Principal,
    input: SourceInput,
    unknownUpload: 'INVALID_REQUEST' | 'UPLOAD_NOT_FOUND',
  ): Promise<DeploymentSource> {
    if (input.uploadId) {
      if (!(await deps.uploads.get(principal.org._id, input.uploadId))) {
        throw new AppError(
          unknownUpload,
          `uploadId ${input.uploadId} is unknown, expired or not this organisation's; upload the zip with POST /uploads/zip first.`,
          { uploadId: input.uploadId },
        );
      }
      return {
        type: 'upload',
        uploadId: input.uploadId,
        ...(input.dockerfilePath ? { dockerfilePath: input.dockerfilePath } : {}),
      };
    }
    const vaultEnvironment = input.vaultEnvironment ?? 'PRODUCTION';
    const secret = input.gitTokenSecretId
      ? await git.secret(principal, input.gitTokenSecretId, input.repoUrl!, vaultEnvironment)
      : undefined;
    await git.repoUrl(input.repoUrl!);
    return {
      type: 'git',
      repoUrl: input.repoUrl!,
      ...(input.branch ? { branch: input.branch } : {}),
      ...(secret ? { gitTokenSecretId: secret, vaultEnvironment } : {}),
      ...(input.dockerfilePath ? { dockerfilePath: input.dockerfilePath } : {}),
    };
  }

  /**
   * The repository a redeploy's `git` builds: what it names, and for what it leaves out, the deployment's own
   * repository (when it was deployed from Git) or else its project's. Another repository brings only the token it
   * names itself: a default's token is never sent to a host the caller chose.
   */
  async function gitOf(
    principal: Principal,
    record: DeploymentRecord,
    named: NonNullable<RedeployChange['git']>,
  ): Promise<SourceInput> {
    if (named.repoUrl !== undefined) return named;
    let base: SourceInput | undefined;
    if (record.source.type === 'git') base = record.source;
    else if (record.projectId) {
      const project = await deps.projects.get(principal.org._id, record.projectId);
      if (project?.repoUrl)
        base = {
          repoUrl: project.repoUrl,
          ...(project.gitBranch ? { branch: project.gitBranch } : {}),
          ...(project.gitTokenSecretId ? { gitTokenSecretId: project.gitTokenSecretId } : {}),
          ...(project.vaultEnvironment ? { vaultEnvironment: project.vaultEnvironment } : {}),
        };
    }
    if (!base)
      throw new AppError(
        'INVALID_REQUEST',
        `git.repoUrl is needed: deployment ${record._id} was not deployed from a Git repository and ${record.projectId ? 'its project names none' : 'is in no project'}.`,
        { deploymentId: record._id },
      );
    const { repoUrl, branch, gitTokenSecretId, vaultEnvironment } = base;
    return {
      repoUrl,
      ...(branch ? { branch } : {}),
      ...(gitTokenSecretId ? { gitTokenSecretId } : {}),
      ...(vaultEnvironment ? { vaultEnvironment } : {}),
      ...named,
    };
  }

  const commands = createDeploymentCommands({ store, temporal, env });

  return {
    /** stop, start, scale, rollback and the follow-up of each (./commands.ts); redeploy checks its source first. */
    ...commands,

    /** The ID a deploy with `idempotencyKey` makes (or made): a caller can record it before the deploy happens. */
    deploymentIdFor: (principal: Pick<Principal, 'org'>, idempotencyKey: string): string =>
      idFor(principal, idempotencyKey),

    /** Whether this organisation already used `idempotencyKey` for a deploy (destroyed deployments included). */
    async idempotencyKeyUsed(principal: Principal, idempotencyKey: string): Promise<boolean> {
      return (await store.findAny(idFor(principal, idempotencyKey))) !== null;
    },

    /**
     * A deploy repeating an idempotency key creates nothing, so it is answered before any creation budget, quota slot
     * or source check is spent: DUPLICATE_REQUEST naming the deployment the first request made. A new (or no) key
     * returns.
     */
    async refuseReplay(principal: Principal, idempotencyKey: string | undefined): Promise<void> {
      if (idempotencyKey === undefined) return;
      const id = idFor(principal, idempotencyKey);
      if (await store.findAny(id)) await duplicate(principal, id, idempotencyKey);
    },

    async deployImage(
      principal: Principal,
      input: DeployInput & { image: string },
      origin: DeploymentRecord['origin'],
    ) {
      return create(principal, input, await imageSource(input.image), origin);
    },

    async deploySource(principal: Principal, input: DeployInput & SourceInput, origin: DeploymentRecord['origin']) {
      return create(principal, input, await builtSource(principal, input, 'INVALID_REQUEST'), origin);
    },

    /**
     * A new environment, new code, or both, as the next release of the same deployment (same ID, same URL): the new
     * source is held to a first deploy's rules before the workflow hears of it, and an upload of another organisation
     * is not found. It creates no deployment, so it spends no creation budget nor quota slot.
     */
    async redeploy(principal: Principal, id: string, change: RedeployChange) {
      const record = await get(principal, id);
      const dockerfilePath = change.dockerfilePath ?? buildOptionsOf(record.source).dockerfilePath;
      const built = dockerfilePath ? { dockerfilePath } : {};
      let source: DeploymentSource | undefined;
      if (change.image !== undefined) source = await imageSource(change.image);
      else if (change.uploadId !== undefined)
        source = await builtSource(principal, { uploadId: change.uploadId, ...built }, 'UPLOAD_NOT_FOUND');
      else if (change.git !== undefined) {
        const { commit, ...named } = change.git;
        const repository = { ...(await gitOf(principal, record, named)), ...built };
        // A commit is fetched by its SHA alone: a branch only the defaults named says nothing about it.
        if (commit && named.branch === undefined) delete repository.branch;
        const checked = await builtSource(principal, repository, 'UPLOAD_NOT_FOUND');
        source = commit && checked.type === 'git' ? { ...checked, commit } : checked;
      }
      return commands.redeploy(principal, id, {
        ...(change.envVars ? { envVars: change.envVars } : {}),
        ...(source ? { source } : {}),
      });
    },

    get,

    list: (
      principal: Principal,
      q: {
        origin?: DeploymentRecord['origin'];
        status?: DeploymentStatus;
        provider?: Provider;
        projectId?: string;
        limit: number;
        offset: number;
      },
    ) =>
      // Below org admin, deployments of projects the caller is not a member of are left out (shared/authz).
      deps.authz
        .visibility(principal)
        .then((v) =>
          store.list({ orgId: principal.org._id, ...q, ...(v.all ? {} : { visibleProjects: v.projectIds }) }),
        ),

    /** Platform lines (build, system) first, then the container's own output; the last `limit`, oldest first. */
    async logs(principal: Principal, id: string, limit: number): Promise<LogLine[]> {
      await get(principal, id);
      const platform = await deps.logs.tail(id, limit);
      // By label, not by the record: a container that died during its start never made it into the record.
      const [latest] = (
        await deps.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } })
      ).sort((a, b) => Number(b.Labels[LABELS.revision]) - Number(a.Labels[LABELS.revision]));
      const container = latest ? await readContainerLogs(deps.docker, latest.Id, limit) : [];
      return [...platform, ...container].slice(-limit);
    },

    /**
     * Durable in three steps, each safe to stop after: the intent is written (immutable), the record hidden, then
     * the workflow told with signalWithStart, so one whose start has not happened yet (a DELETE that overtook its
     * create) starts straight into its destroy and the create's own start finds it taken. Should the api stop, or
     * Temporal not answer, after the intent, the reconciler schedule hides the record and tells the workflow.
     */
    async destroy(principal: Principal, id: string): Promise<void> {
      const orgId = principal.org._id;
      const record = await store.get(orgId, id);
      if (!record) throw notFound(id);
      const requestId = currentRequestId();
      await store.recordDestroyIntent({
        _id: id,
        orgId,
        requestedBy: principal.user._id,
        requestedAt: new Date(),
        ...(requestId ? { requestId } : {}),
      });
      // False when a concurrent destroy hid it first: telling the workflow again changes nothing.
      await store.markDestroyed(orgId, id);
      // Followers read nothing until told; a lost announcement leaves them to the feed's recheck.
      await deps.feed.publish(id, 'destroyed').catch((err: unknown) => {
        deps.log.warn({ err, deploymentId: id }, 'destroy not announced to its followers; they will see it on recheck');
      });
      try {
        await temporal.withDeadline(Date.now() + DESTROY_SIGNAL_DEADLINE_MS, () =>
          temporal.workflow.signalWithStart(DEPLOYMENT_WORKFLOW, {
            ...workflowOptions(record, principal),
            signal: destroySignal,
            signalArgs: [],
          }),
        );
      } catch (err) {
        // A closed workflow already ran its destroy.
        if (err instanceof WorkflowExecutionAlreadyStartedError) return;
        deps.log.warn(
          { err, deploymentId: id },
          'destroy recorded and the deployment hidden, but its workflow was not told; the reconciler will finish it',
        );
      }
    },
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
