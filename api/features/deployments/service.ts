import { createDeploymentCommands } from './commands';
import { createDeploymentCreation } from './service.create';
import type { DeploymentServiceDeps } from './service.deps';
import { createDestroy } from './service.destroy';
import { createIdempotency } from './service.idempotency';
import { createDeploymentReads } from './service.reads';
import { createRedeploy } from './service.redeploy';
import { createSourceChecks } from './service.sources';
import { createVolumeAttachments } from './service.volumes';
import { createDeploymentWorkflows } from './service.workflow';

export type { DeployInput } from './service.create';
export type { DeploymentServiceDeps } from './service.deps';
export type { RedeployChange } from './service.redeploy';
export type { SourceInput } from './service.sources';

/**
 * The deployments' behaviour, no HTTP: a new deployment from an image, an upload or Git with the plan's admission and
 * quota slot (service.create.ts, service.admission.ts), the idempotency key's replies (service.idempotency.ts), the
 * source checks a first deploy and a redeploy share (service.sources.ts, service.redeploy.ts), reads and logs
 * (service.reads.ts), destroy (service.destroy.ts), all starting or signalling one workflow (service.workflow.ts).
 */
export function createDeploymentService(deps: DeploymentServiceDeps) {
  const { store, temporal, env } = deps;
  const workflows = createDeploymentWorkflows(deps);
  const idempotency = createIdempotency(deps, workflows);
  const sources = createSourceChecks(deps);
  const reads = createDeploymentReads(deps);
  const commands = createDeploymentCommands({
    store,
    temporal,
    env,
    acceptWaitMs: deps.config.DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS,
  });

  const attachments = createVolumeAttachments(deps, { commands });

  return {
    /** stop, start, scale, rollback and the follow-up of each (./commands.ts); redeploy checks its source first. */
    ...commands,
    ...idempotency.methods,
    /** Volumes attached and detached, each change a new release (./service.volumes.ts). */
    ...attachments,
    ...createDeploymentCreation(deps, { workflows, idempotency, sources, attachments }),
    ...createRedeploy(deps, { reads, sources, commands }),
    ...reads,
    ...createDestroy(deps, workflows),
  };
}

export type DeploymentService = ReturnType<typeof createDeploymentService>;
