import type { DomainStore } from '@shared/domains/store';
import type { EdgeRouter } from '@shared/edge';

/**
 * A destroyed deployment's custom domains: their routes leave the edge router, their verified claims are released
 * (the host may be verified again, by anyone) and their records go. Runs in the deployment workflow's destroy, so a
 * failure is retried by the next attempt; each step is idempotent.
 */
export function createDomainDestroyHook(deps: {
  store: Pick<DomainStore, 'ofDeployment' | 'remove' | 'claims'>;
  router: Pick<EdgeRouter, 'unpublishDomain'>;
}) {
  return async (deploymentId: string): Promise<void> => {
    for (const d of await deps.store.ofDeployment(deploymentId)) {
      await deps.router.unpublishDomain(d._id);
      await deps.store.claims.removeOf(d._id);
      await deps.store.remove(d._id);
    }
  };
}
