import {
  type Client,
  WorkflowClient,
  type WorkflowClientInterceptor,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  WorkflowUpdateStage,
} from '@temporalio/client';
import { defaultPayloadConverter, type UpdateDefinition } from '@temporalio/common';
import { v4 as uuidv4 } from 'uuid';

import {
  COMMAND_REFUSED,
  type CommandName,
  type CommandOutcome,
  type CommandRefusal,
  commandsQuery,
  deploymentWorkflowId,
  ONE_WRITER,
  type RedeployArgs,
  redeployCommand,
  rollbackCommand,
  scaleCommand,
  startCommand,
  stopCommand,
} from '@shared/contracts/deployment';
import { envRefClashes, envRefTargetId } from '@shared/deployments/attachments';
import { deploymentNotFound } from '@shared/deployments/errors';
import type { DeploymentStore } from '@shared/deployments/store';
import type { DeploymentRecord, DeploymentSource } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { PLAN_POLICIES } from '@shared/plans';
import { currentRequestId } from '@shared/request-context';
import type { EnvSealer } from '@shared/secrets/deployment-env';
import { isWaitOver } from '@shared/temporal';

import { ENV_LIMITS } from './schemas';

/** What the api answers (202) when the deployment's workflow accepted a command: follow it with `command.id`. */
export interface CommandAccepted {
  deployment: DeploymentRecord;
  command: { id: string; name: CommandName };
}

/** The follow-up of an accepted command: waiting or running, or how it ended. */
export type CommandProgress =
  | { id: string; state: 'running' }
  | { id: string; state: 'succeeded'; outcome: CommandOutcome }
  | { id: string; state: 'failed'; message: string };

/** A validator's refusal, read from the update's outcome before the caller is answered. */
class Refused extends Error {
  constructor(
    message: string,
    readonly refusal?: CommandRefusal,
  ) {
    super(message);
  }
}

/**
 * startUpdate answers as soon as the update is accepted or rejected; a rejection arrives as the update's outcome,
 * which the handle only shows when awaited. Read here, it becomes a 400 at once instead of a 202 for a command that
 * will never run.
 */
const refusals: WorkflowClientInterceptor = {
  async startUpdate(input, next) {
    const out = await next(input);
    const failure = out.outcome?.failure;
    if (failure?.applicationFailureInfo?.type === COMMAND_REFUSED) {
      const payload = failure.applicationFailureInfo.details?.payloads?.[0];
      const refusal = payload ? defaultPayloadConverter.fromPayload<CommandRefusal>(payload) : undefined;
      throw new Refused(failure.message ?? 'The command was refused.', refusal);
    }
    return out;
  },
};

const notFound = deploymentNotFound;

/**
 * The deployment controls (docs/architecture.md, "A deployment's lifecycle, as workflows") — stop, start, redeploy,
 * scale, rollback — as the api sends them: each is a Workflow Update on `deployment/<id>`, answered once the workflow
 * accepted it (its validator checked the status) and carried out in the order accepted. Destroy stays
 * DeploymentService.destroy (intent, hide, signal).
 */
export function createDeploymentCommands(deps: {
  store: Pick<DeploymentStore, 'get' | 'releases' | 'attachments'>;
  temporal: Client;
  /** Seals a redeploy's new environment values, and opens the serving ones an environment change starts from. */
  env: Pick<EnvSealer, 'seal' | 'open'>;
  /**
   * How long a request waits for the deployment's workflow to take a command (DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS):
   * a workflow takes it only when a worker runs it, and a request must not hang while none does.
   */
  acceptWaitMs?: number;
}) {
  const { store, env } = deps;
  const workflows = new WorkflowClient({
    connection: deps.temporal.connection,
    namespace: deps.temporal.options.namespace,
    interceptors: [refusals],
  });

  async function live(principal: Principal, id: string): Promise<DeploymentRecord> {
    const record = await store.get(principal.org._id, id);
    if (!record) throw notFound(id);
    return record;
  }

  /** A name that is a reference (its value read from another resource) is not also given a plain value. */
  async function refuseRefNames(record: DeploymentRecord, names: string[]) {
    const refs = (await store.attachments.listByDeployment(record._id)).flatMap((a) => (a.kind === 'env' ? [a] : []));
    const clash = envRefClashes(
      names,
      refs.map((r) => r.name),
    );
    if (clash.length)
      throw new AppError(
        'CONFLICT',
        `${clash.join(', ')} ${clash.length === 1 ? 'is' : 'are'} read from another resource (${refs
          .filter((r) => clash.includes(r.name))
          .map((r) => `${r.name}: ${r.ref.type} ${envRefTargetId(r.ref)}`)
          .join(
            '; ',
          )}), so ${clash.length === 1 ? 'it' : 'they'} cannot also be set here: unlink the reference first, or use another name.`,
        { deploymentId: record._id, envRefNames: clash },
      );
  }

  /** The volumes a deployment mounts: more than one instance of it is refused (one writer per volume). */
  async function volumeCount(id: string): Promise<number> {
    return (await store.attachments.listByDeployment(id)).filter((a) => a.kind === 'volume').length;
  }

  /** The values sealed into an env set of their own; a command names the set, so no value enters workflow history. */
  async function envSet(record: DeploymentRecord, values: Record<string, string>) {
    const envRef = uuidv4();
    const envNames = Object.keys(values).sort();
    const envSealed = env.seal(record, values);
    await store.releases.putEnvSet({
      _id: envRef,
      deploymentId: record._id,
      orgId: record.orgId,
      envNames,
      ...(envSealed ? { envSealed } : {}),
      createdAt: new Date(),
    });
    return { envNames, envRef };
  }

  async function send<A extends unknown[]>(
    principal: Principal,
    id: string,
    name: CommandName,
    def: UpdateDefinition<CommandOutcome, A>,
    args: A,
  ): Promise<CommandAccepted> {
    const record = await live(principal, id);
    // The request's ID makes a retried request the same update: the workflow runs it once.
    const requestId = currentRequestId();
    const updateId = requestId ? `${name}:${requestId}` : `${name}:${uuidv4()}`;
    // One signature for updates with and without arguments (startUpdate's overloads split them).
    const startUpdate = workflows.getHandle(deploymentWorkflowId(id)).startUpdate as (
      d: unknown,
      o: unknown,
    ) => Promise<{ updateId: string }>;
    try {
      const deadline = new Date(Date.now() + (deps.acceptWaitMs ?? 10_000));
      const handle = await workflows.withDeadline(deadline, () =>
        startUpdate(def, { args, updateId, waitForStage: WorkflowUpdateStage.ACCEPTED }),
      );
      return { deployment: (await store.get(principal.org._id, id)) ?? record, command: { id: handle.updateId, name } };
    } catch (err) {
      // Temporal holds the command for the workflow, which has not run it yet (no worker runs, or none has come to
      // it): the answer is the same 202, and the command's read says whether it ran or was refused once it did.
      // Sending it again with the same X-Request-Id is the same command.
      if (isWaitOver(err)) return { deployment: record, command: { id: updateId, name } };
      if (err instanceof Refused) {
        throw new AppError('INVALID_REQUEST', err.message, {
          deploymentId: id,
          ...(err.refusal ? { status: err.refusal.status, allowed: err.refusal.allowed } : {}),
        });
      }
      // Its workflow has ended: the deployment was destroyed meanwhile.
      if (err instanceof WorkflowNotFoundError) throw notFound(id);
      throw err;
    }
  }

  return {
    stop: (principal: Principal, id: string) => send(principal, id, 'stop', stopCommand, []),

    start: (principal: Principal, id: string) => send(principal, id, 'start', startCommand, []),

    /**
     * A new release started beside the serving one, with `envVars` replacing the environment, `source` (already
     * checked by the caller) as its new code, or both. The values are sealed into an env set first; the command names
     * the set, so no value enters workflow history.
     */
    async redeploy(
      principal: Principal,
      id: string,
      change: { envVars?: Record<string, string>; source?: DeploymentSource },
    ) {
      const record = await live(principal, id);
      const args: RedeployArgs = change.source ? { source: change.source } : {};
      if (change.envVars) await refuseRefNames(record, Object.keys(change.envVars));
      if (change.envVars) Object.assign(args, await envSet(record, change.envVars));
      return send(principal, id, 'redeploy', redeployCommand, [args]);
    },

    /**
     * Some variables set or removed, the others kept: the serving release's values are opened here, merged, and
     * sealed into a new env set, which a redeploy then runs exactly as one with the whole `envVars` would. Names only
     * come back. The merge starts from what serves now: a change still waiting in the queue is not part of it.
     */
    async patchEnv(principal: Principal, id: string, change: { set?: Record<string, string>; unset?: string[] }) {
      const record = await live(principal, id);
      const current = env.open(record);
      const unset = change.unset ?? [];
      const absent = unset.filter((n) => !Object.hasOwn(current, n));
      if (absent.length) {
        const names = Object.keys(current).sort();
        throw new AppError(
          'INVALID_REQUEST',
          `${absent.join(', ')} ${absent.length === 1 ? 'is' : 'are'} not set on deployment ${id}, so there is nothing to remove; its variables are ${names.length ? names.join(', ') : 'none'}.`,
          { deploymentId: id, notSet: absent, envVarNames: names },
        );
      }
      await refuseRefNames(record, Object.keys(change.set ?? {}));
      const next: Record<string, string> = { ...current, ...(change.set ?? {}) };
      for (const name of unset) delete next[name];
      const count = Object.keys(next).length;
      const bytes = Object.entries(next).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v) + 2, 0);
      if (count > ENV_LIMITS.maxVars || bytes > ENV_LIMITS.maxTotalBytes)
        throw new AppError(
          'INVALID_REQUEST',
          `The environment would have ${count} variables and ${bytes} bytes of names and values; at most ${ENV_LIMITS.maxVars} variables and ${ENV_LIMITS.maxTotalBytes} bytes are allowed: remove some (unset) or shorten values.`,
          { deploymentId: id, maxVars: ENV_LIMITS.maxVars, maxTotalBytes: ENV_LIMITS.maxTotalBytes },
        );
      const sealed = await envSet(record, next);
      const accepted = await send(principal, id, 'redeploy', redeployCommand, [sealed]);
      return {
        ...accepted,
        env: { envVarNames: sealed.envNames, set: Object.keys(change.set ?? {}).sort(), unset: [...unset].sort() },
      };
    },

    /** 0 to the plan's maximum; 0 stops the deployment. */
    async scale(principal: Principal, id: string, replicas: number) {
      const maxReplicas = PLAN_POLICIES[principal.org.plan].maxReplicas;
      if (!Number.isInteger(replicas) || replicas < 0 || replicas > maxReplicas) {
        throw new AppError(
          'INVALID_REQUEST',
          `replicas must be a whole number from 0 to ${maxReplicas} on the ${principal.org.plan} plan.`,
          { replicas, maxReplicas },
        );
      }
      if (replicas > 1 && (await volumeCount(id)) > 0) {
        await live(principal, id);
        throw new AppError('CONFLICT', `Deployment ${id} mounts a volume. ${ONE_WRITER}`, {
          deploymentId: id,
          replicas,
        });
      }
      return send(principal, id, 'scale', scaleCommand, [{ replicas, maxReplicas }]);
    },

    /**
     * Ships the serving code and env again as a new release, which copies the deployment's attachments as they are
     * now (a volume attached or detached, a reference linked). `volumes` is how many it mounts after the change. When
     * the workflow refuses (or anything else fails before it took the command), `undo` puts the attachments back as
     * they were, so the records never say what no release will run.
     */
    async remount(principal: Principal, id: string, volumes: number, undo: () => Promise<unknown>) {
      try {
        return await send(principal, id, 'redeploy', redeployCommand, [{ remount: { volumes } }]);
      } catch (err) {
        await undo();
        throw err;
      }
    },

    /** To `revision`, or without it to the last release that was healthy before the serving one. */
    rollback: (principal: Principal, id: string, revision?: number) =>
      send(principal, id, 'rollback', rollbackCommand, [revision === undefined ? {} : { revision }]),

    /** Where an accepted command stands: waiting or being carried out, or how it ended. */
    async command(principal: Principal, id: string, commandId: string): Promise<CommandProgress> {
      await live(principal, id);
      const handle = workflows.getHandle(deploymentWorkflowId(id));
      let view;
      try {
        view = await handle.query(commandsQuery);
      } catch (err) {
        if (err instanceof WorkflowNotFoundError) throw notFound(id);
        throw err;
      }
      if ([view.running, ...view.queued].some((c) => c?.updateId === commandId))
        return { id: commandId, state: 'running' };
      try {
        // Ended: its outcome is kept by the server for this run of the workflow.
        const outcome = await handle.getUpdateHandle<CommandOutcome>(commandId).result();
        return { id: commandId, state: 'succeeded', outcome };
      } catch (err) {
        if (err instanceof WorkflowUpdateFailedError)
          return { id: commandId, state: 'failed', message: (err.cause as Error | undefined)?.message ?? err.message };
        // The workflow answered the query just now: what is not found is the update.
        if (err instanceof WorkflowNotFoundError)
          throw new AppError(
            'COMMAND_NOT_FOUND',
            `No command ${commandId} on deployment ${id}: it is unknown, or older than the deployment's recent commands; read the deployment's status and events instead.`,
            { deploymentId: id, commandId },
          );
        throw err;
      }
    },
  };
}

export type DeploymentCommands = ReturnType<typeof createDeploymentCommands>;
