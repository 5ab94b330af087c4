import type { S3Client } from '@aws-sdk/client-s3';

import type { Config } from '../shared/config';
import type { DeploymentStore } from '../shared/db/deployments-store';
import type { LogStore } from '../shared/db/logs-store';
import type { SalesStore } from '../shared/db/sales-store';
import type { UploadStore } from '../shared/db/uploads-store';
import type { Vault } from '../shared/secrets/vault';
import { type BuildDeps, createBuildActivities } from './build';
import { createDeploymentActivities } from './deployments';
import { createEngineLocal, type EngineLocalDeps } from './providers/engine-local';
import { createUploadActivities } from './uploads';
import { createOutboxActivities } from './webhook-outbox';
import { createWebhookActivities } from './webhooks';

export interface ActivityDeps {
  store: DeploymentStore;
  logs: LogStore;
  sales: SalesStore;
  allowPrivateWebhookTargets: boolean;
  engine: EngineLocalDeps;
  s3: S3Client;
  uploads: UploadStore;
  vault: Pick<Vault, 'revealForGit'>;
  config: BuildDeps['config'] & Pick<Config, 'UPLOAD_TTL_S'>;
}

/** Every activity the worker registers, built from its dependencies. */
export function createActivities(deps: ActivityDeps) {
  const engine = createEngineLocal(deps.engine);
  return {
    ...createDeploymentActivities(deps),
    ...createBuildActivities({
      docker: deps.engine.docker,
      s3: deps.s3,
      uploads: deps.uploads,
      vault: deps.vault,
      logs: deps.logs,
      config: deps.config,
    }),
    ...createUploadActivities({ store: deps.uploads, s3: deps.s3, bucket: deps.config.S3_BUCKET }),
    ...createWebhookActivities({ store: deps.sales, allowPrivateTargets: deps.allowPrivateWebhookTargets }),
    ...createOutboxActivities({ store: deps.sales }),
    ensureImage: engine.ensureImage.bind(engine),
    startContainer: engine.startContainer.bind(engine),
    waitReady: engine.waitReady.bind(engine),
    stopDeployment: engine.stopDeployment.bind(engine),
    removeDeployment: engine.removeDeployment.bind(engine),
  };
}

export type Activities = ReturnType<typeof createActivities>;
