import type { EngineLocal } from '../providers/engine-local';
import { type BuildDeps, createBuildActivities } from './build';
import { createLegacyActivities } from './legacy';
import { createReleaseActivities, type ReleaseActivityDeps } from './releases';

/**
 * The deployment workflow's activities (workflows/deployment): status and release records, the source build, the
 * engine's instances and routes through the provider interface (activities/providers/), and the single-container
 * first deploy that recorded histories still take (legacy.ts).
 */
export function createDeploymentActivities(
  deps: Omit<ReleaseActivityDeps, 'provider'> & { engine: EngineLocal; build: BuildDeps },
) {
  const { engine } = deps;
  return {
    ...createReleaseActivities({ ...deps, provider: engine }),
    ...createBuildActivities(deps.build),
    ...createLegacyActivities(deps),
    /** Every container, built image and (when unused) network of the deployment: its destroy. */
    removeDeployment: (deploymentId: string) => engine.destroy(deploymentId),
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
