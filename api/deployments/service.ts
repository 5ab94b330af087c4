import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { v4 as uuidv4, v5 as uuidv5 } from 'uuid';

import type { Config } from '../../shared/config';
import { deploymentWorkflowId, SEARCH_ATTRIBUTES } from '../../shared/constants';
import type { DeploymentStore } from '../../shared/db/deployments-store';
import { isDuplicateKey } from '../../shared/db/mongo';
import type { DeploymentRecord, DeploymentStatus, Provider } from '../../shared/deployments';
import { AppError } from '../../shared/errors';
import type { Principal } from '../../shared/identity';
import { type DeploymentWorkflowInput, destroySignal } from '../../workflows';

/** Namespace of idempotent deployment IDs: uuidv5(orgId + ":" + requestId) (DESIGN.md §4). */
const REQUEST_ID_NAMESPACE = '8f1d7a52-4c1e-4f7e-9a3b-2d5c6e7f8a90';

export interface DeployInput {
  image: string;
  name: string;
  port: number;
  envVars: Record<string, string>;
  requestId?: string;
  provider: Provider;
}

export function createDeploymentService(deps: {
  store: DeploymentStore;
  temporal: Client;
  config: Pick<Config, 'DEPLOY_READY_TIMEOUT_S' | 'TEMPORAL_TASK_QUEUE'>;
}) {
  const { store, temporal } = deps;

  function workflowInput(record: DeploymentRecord): DeploymentWorkflowInput {
    return {
      deploymentId: record._id,
      orgId: record.orgId,
      image: record.source.image,
      port: record.port,
      envVars: record.envVars,
      revision: record.revision,
      limits: { memoryMb: 512, cpus: 1, pids: 512 },
      readyTimeoutS: deps.config.DEPLOY_READY_TIMEOUT_S,
      version: record.version,
    };
  }

  /**
   * Starts the record's workflow unless its ID was ever used: a completed (destroyed) deployment is never re-run,
   * and a concurrent start of the same record is the same workflow.
   */
  async function ensureWorkflow(record: DeploymentRecord): Promise<void> {
    try {
      await temporal.workflow.start('deploymentWorkflow', {
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        workflowId: deploymentWorkflowId(record._id),
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        args: [workflowInput(record)],
        searchAttributes: { [SEARCH_ATTRIBUTES.deploymentId]: [record._id], [SEARCH_ATTRIBUTES.orgId]: [record.orgId] },
      });
    } catch (err) {
      if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    }
  }

  return {
    /** Writes the queued record, then starts its workflow; returns as soon as both are durable. */
    async deploy(
      principal: Principal,
      input: DeployInput,
      origin: DeploymentRecord['origin'],
    ): Promise<DeploymentRecord> {
      const orgId = principal.org._id;
      const id = input.requestId ? uuidv5(`${orgId}:${input.requestId}`, REQUEST_ID_NAMESPACE) : uuidv4();
      const now = new Date();
      const record: DeploymentRecord = {
        _id: id,
        orgId,
        createdBy: principal.user._id,
        origin,
        name: input.name,
        provider: input.provider,
        source: { type: 'image', image: input.image },
        port: input.port,
        envVars: input.envVars,
        ...(input.requestId ? { requestId: input.requestId } : {}),
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
        if (!isDuplicateKey(err)) throw err;
        // The first request may have died between its insert and its workflow start: finish it, start nothing new.
        const first = await store.findAny(id);
        if (first && !first.destroyedAt) await ensureWorkflow(first);
        throw new AppError(
          'DUPLICATE_REQUEST',
          `requestId "${input.requestId}" was already used; no second deployment was started.`,
          {
            deploymentId: id,
            requestId: input.requestId,
          },
        );
      }
      await ensureWorkflow(record);
      return record;
    },

    async get(principal: Principal, id: string): Promise<DeploymentRecord> {
      const record = await store.get(principal.org._id, id);
      if (!record)
        throw new AppError('DEPLOYMENT_NOT_FOUND', `No deployment ${id} in this organisation.`, { deploymentId: id });
      return record;
    },

    list: (
      principal: Principal,
      q: {
        origin?: DeploymentRecord['origin'];
        status?: DeploymentStatus;
        provider?: Provider;
        limit: number;
        offset: number;
      },
    ) => store.list({ orgId: principal.org._id, ...q }),

    /** Hides the deployment at once, then lets its workflow remove what it holds. */
    async destroy(principal: Principal, id: string): Promise<void> {
      if (!(await store.markDestroyed(principal.org._id, id))) {
        throw new AppError('DEPLOYMENT_NOT_FOUND', `No deployment ${id} in this organisation.`, { deploymentId: id });
      }
      try {
        await temporal.workflow.getHandle(deploymentWorkflowId(id)).signal(destroySignal);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    },
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
