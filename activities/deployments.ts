import type { DeploymentStore, StatusChange } from '../shared/db/deployments-store';

/** MongoDB writes of the deployment workflow: each status change, keyed by the workflow's step counter. */
export function createDeploymentActivities({ store }: { store: Pick<DeploymentStore, 'recordStatus'> }) {
  return {
    async recordStatus(change: StatusChange): Promise<void> {
      await store.recordStatus(change);
    },
  };
}
