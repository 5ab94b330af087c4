import type { DeploymentStore } from '../shared/db/deployments-store';
import type { LogStore } from '../shared/db/logs-store';
import type { SalesStore } from '../shared/db/sales-store';
import { createDeploymentActivities } from './deployments';
import { createEngineLocal, type EngineLocalDeps } from './providers/engine-local';
import { createWebhookActivities } from './webhooks';

export interface ActivityDeps {
  store: DeploymentStore;
  logs: LogStore;
  sales: SalesStore;
  allowPrivateWebhookTargets: boolean;
  engine: EngineLocalDeps;
}

/** Every activity the worker registers, built from its dependencies. */
export function createActivities(deps: ActivityDeps) {
  const engine = createEngineLocal(deps.engine);
  return {
    ...createDeploymentActivities(deps),
    ...createWebhookActivities({ store: deps.sales, allowPrivateTargets: deps.allowPrivateWebhookTargets }),
    ensureImage: engine.ensureImage.bind(engine),
    startContainer: engine.startContainer.bind(engine),
    waitReady: engine.waitReady.bind(engine),
    stopDeployment: engine.stopDeployment.bind(engine),
    removeDeployment: engine.removeDeployment.bind(engine),
  };
}

export type Activities = ReturnType<typeof createActivities>;
