import type { DeploymentStore, StatusChange } from '../shared/db/deployments-store';
import type { LogStore } from '../shared/db/logs-store';

/** MongoDB writes of the deployment workflow: each status change, keyed by the workflow's step counter. */
export function createDeploymentActivities({
  store,
  logs,
}: {
  store: Pick<DeploymentStore, 'recordStatus'>;
  logs: Pick<LogStore, 'append'>;
}) {
  return {
    async recordStatus(change: StatusChange): Promise<void> {
      await store.recordStatus(change);
    },
    async appendLog(input: { deploymentId: string; stream: 'build' | 'system'; messages: string[] }): Promise<void> {
      await logs.append(input.deploymentId, input.stream, input.messages);
    },
  };
}
