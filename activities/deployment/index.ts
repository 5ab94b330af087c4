import type { AttachmentStore } from '@shared/deployments/attachments';

import type { EngineLocal } from '../providers/engine-local';
import { type BuildDeps, createBuildActivities } from './build';
import { type CloudActivityDeps, createCloudActivities } from './cloud';
import { createLegacyActivities } from './legacy';
import { createReleaseActivities, type ReleaseActivityDeps } from './releases';

/**
 * The deployment workflow's activities (workflows/deployment): status and release records, the source build, the
 * engine's instances and routes through the provider interface (activities/providers/), and the single-container
 * first deploy that recorded histories still take (legacy.ts).
 */
export function createDeploymentActivities(
  deps: Omit<ReleaseActivityDeps, 'provider' | 'attachments'> & {
    engine: EngineLocal;
    build: BuildDeps;
    attachments: Pick<AttachmentStore, 'listByDeployment' | 'removeAllOf'>;
    /** What else goes with a destroyed deployment once its containers are gone (its databases). */
    afterDestroy?: (deploymentId: string) => Promise<void>;
    /** The cloud providers' side; without it (no database) a deploy to a cloud fails saying the server has none. */
    cloud?: CloudActivityDeps;
  },
) {
  const { engine } = deps;
  return {
    ...createReleaseActivities({ ...deps, provider: engine }),
    ...createBuildActivities(deps.build),
    ...createLegacyActivities(deps),
    ...createCloudActivities(
      deps.cloud ?? {
        credentials: {
          open: async () => null,
          openCandidate: async () => null,
          dropCandidate: async () => undefined,
          holders: async () => [],
        },
        lifecycle: async () => new Map(),
        adapters: {},
        releaseEnv: async () => null,
        record: async (id: string) => ({ _id: id, orgId: '' }),
        env: deps.env,
      },
    ),
    /**
     * Every container, built image and (when unused) network of the deployment: its destroy. Its attachments go
     * last, once no container mounts its volumes: the volumes and their data stay, free to attach elsewhere.
     */
    async removeDeployment(deploymentId: string) {
      const removed = await engine.destroy(deploymentId);
      await deps.attachments.removeAllOf(deploymentId);
      await deps.afterDestroy?.(deploymentId);
      return removed;
    },
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
