import { ApplicationFailure } from '@temporalio/common';

import type { DeploymentStore } from '@shared/deployments/store';
import type { EnvSealer } from '@shared/secrets/deployment-env';

import type { ContainerSpec, EngineLocal, StartedContainer } from '../providers/engine-local';

/** What the workflow sends to start a container: env names stay in the record, values never enter history. */
export type StartSpec = Omit<ContainerSpec, 'envVars'> & {
  /** Only from workflows started before values were passed by reference. */
  envVars?: Record<string, string>;
};

/**
 * The single-container first deploy's activities (workflows/deployment/first-deploy.ts, `legacyDeploy`): the path
 * deployments started before releases take. Their names are in recorded histories, so they stay while stored ones
 * call them, and a deployment caught mid-deploy by an upgrade finishes on them: ensureImage and startContainer (every
 * deployment-*.json in test/fixtures/histories but deployment-destroyed-while-building), waitReady
 * (deployment-image-running-destroyed, deployment-destroyed-while-starting, deployment-zip-running-destroyed,
 * deployment-open-running), stopDeployment (deployment-failed-destroyed, deployment-open-failed).
 */
export function createLegacyActivities(deps: {
  engine: Pick<EngineLocal, 'ensureImage' | 'startContainer' | 'waitReady' | 'stopDeployment'>;
  store: Pick<DeploymentStore, 'findAny'>;
  env: Pick<EnvSealer, 'open'>;
}) {
  const { engine } = deps;
  return {
    ensureImage: engine.ensureImage.bind(engine),
    /** Idempotent on the container name (the engine's), so a retried attempt reuses what an earlier one made. */
    async startContainer(spec: StartSpec): Promise<StartedContainer> {
      let envVars = spec.envVars;
      if (!envVars) {
        const record = await deps.store.findAny(spec.deploymentId);
        if (!record)
          throw ApplicationFailure.nonRetryable(`deployment ${spec.deploymentId} has no record`, 'DeploymentUnknown');
        envVars = deps.env.open(record);
      }
      return engine.startContainer({ ...spec, envVars });
    },
    waitReady: engine.waitReady.bind(engine),
    stopDeployment: engine.stopDeployment.bind(engine),
  };
}
