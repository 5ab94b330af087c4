import { ApplicationFailure } from '@temporalio/common';

import type { DeploymentStore, StatusChange } from '../shared/deployments/store';
import type { LogStore } from '../shared/deployments/logs-store';
import type { EnvSealer } from '../shared/secrets/deployment-env';
import type { ContainerSpec, EngineLocal, StartedContainer } from './providers/engine-local';

/** What the workflow sends to start a container: env names stay in the record, values never enter history. */
export type StartSpec = Omit<ContainerSpec, 'envVars'> & {
  /** Only from workflows started before values were passed by reference. */
  envVars?: Record<string, string>;
};

/** MongoDB writes of the deployment workflow, and the container start that reads the sealed env values itself. */
export function createDeploymentActivities({
  store,
  logs,
  engine,
  env,
}: {
  store: Pick<DeploymentStore, 'recordStatus' | 'findAny'>;
  logs: Pick<LogStore, 'append'>;
  engine: Pick<EngineLocal, 'startContainer' | 'ensureNetwork'>;
  env: Pick<EnvSealer, 'open'>;
}) {
  return {
    async recordStatus(change: StatusChange): Promise<void> {
      await store.recordStatus(change);
    },
    async appendLog(input: { deploymentId: string; stream: 'build' | 'system'; messages: string[] }): Promise<void> {
      await logs.append(input.deploymentId, input.stream, input.messages);
    },
    /** Idempotent on the container name (the engine's), so a retried attempt reuses what an earlier one made. */
    async startContainer(spec: StartSpec): Promise<StartedContainer> {
      let envVars = spec.envVars;
      if (!envVars) {
        const record = await store.findAny(spec.deploymentId);
        if (!record) {
          throw ApplicationFailure.nonRetryable(`deployment ${spec.deploymentId} has no record`, 'DeploymentUnknown');
        }
        envVars = env.open(record);
      }
      return engine.startContainer({ ...spec, envVars });
    },
  };
}
