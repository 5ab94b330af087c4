import type { EngineLocal } from '../providers/engine-local';
import { type BuildDeps, createBuildActivities } from './build';
import { createReleaseActivities, type ReleaseActivityDeps } from './releases';

/**
 * The deployment workflow's activities (workflows/deployment): status and release records, the source build, and the
 * engine's instances and routes through the provider (activities/providers/).
 */
export function createDeploymentActivities(
  deps: Omit<ReleaseActivityDeps, 'engine' | 'provider'> & { engine: EngineLocal; build: BuildDeps },
) {
  const { engine } = deps;
  return {
    ...createReleaseActivities({ ...deps, provider: engine }),
    ...createBuildActivities(deps.build),
    ensureImage: engine.ensureImage.bind(engine),
    waitReady: engine.waitReady.bind(engine),
    stopDeployment: engine.stopDeployment.bind(engine),
    removeDeployment: engine.removeDeployment.bind(engine),
  };
}

export type DeploymentActivities = ReturnType<typeof createDeploymentActivities>;
