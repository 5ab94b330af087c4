import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';

import { DEPLOYMENT_WORKFLOW, deploymentWorkflowId, type DeploymentWorkflowInput } from '@shared/contracts/deployment';
import { type DeploymentRecord, envNamesOf } from '@shared/deployments/types';
import type { Principal } from '@shared/identity/service';
import { PLAN_POLICIES } from '@shared/plans';
import { currentRequestId } from '@shared/request-context';

import type { DeploymentServiceDeps } from './service.deps';
import { deploymentSummary, workflowVisibility } from './visibility';

/** How a deployment's workflow is started: by a create, a replayed create that died halfway, and a destroy. */
export function createDeploymentWorkflows(deps: Pick<DeploymentServiceDeps, 'temporal' | 'config'>) {
  const { temporal } = deps;

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
      // Only a cloud's deployments carry it, so engine_local's input stays as every workflow before clouds had it.
      ...(record.provider !== 'engine_local' ? { provider: record.provider, region: record.region! } : {}),
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

  return { workflowOptions, ensureWorkflow };
}

export type DeploymentWorkflows = ReturnType<typeof createDeploymentWorkflows>;
