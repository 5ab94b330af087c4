import { createLogStore } from '@shared/deployments/logs-store';
import { createStatusModel } from '@shared/deployments/read-model';
import { createDeploymentStore } from '@shared/deployments/store';
import { createVolumeStore } from '@shared/volumes/store';

import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createCloudReader } from './cloud-reads';
import { createDeploymentFollower } from './events';
import { createDeploymentObserver } from './observe';
import { createOrgStatusHub } from './org-events';
import { createQuota, quotaRecords } from './quota';
import { createDeploymentService } from './service';
import { createDeploymentWaiter } from './wait';

/** The deployments' services, from the core (their stores' indexes made before the api serves). */
export async function composeDeployments(core: Core) {
  const { db, config } = core;
  const store = createDeploymentStore(db);
  const logs = createLogStore(db);
  // Sequential on purpose: FerretDB handles concurrent index builds poorly.
  await store.ensureIndexes();
  await logs.ensureIndexes();
  const model = createStatusModel({ redis: core.redis, keyPrefix: config.REDIS_KEY_PREFIX, store });
  const deployments = createDeploymentService({
    store,
    logs,
    feed: core.statusFeed,
    model,
    uploads: core.uploadStore,
    projects: core.projectStore,
    authz: core.authz,
    volumes: createVolumeStore(db),
    env: core.envSealer,
    git: core.gitSource,
    temporal: core.temporal,
    docker: core.docker,
    log: core.log,
    orgSettings: core.orgSettings,
    cloudCredentials: core.cloudCredentials,
    quota: createQuota({
      redis: core.redis,
      keyPrefix: config.REDIS_KEY_PREFIX,
      records: quotaRecords(db, core.temporal),
      leaseS: config.QUOTA_LEASE_S,
      resyncS: config.QUOTA_RESYNC_S,
    }),
    config,
  });
  const get = deployments.get;
  return {
    deployments,
    /** Releases, health, resource use and logs of a deployment (engine reads and recorded samples). */
    observe: createDeploymentObserver({
      docker: core.docker,
      releases: store.releases,
      metrics: store.metrics,
      logs,
      config,
      cloud: createCloudReader({ temporal: core.temporal, config }),
    }),
    /** Every deployment's status changes, for the streams that follow a whole organisation. */
    orgStatus: createOrgStatusHub({ redis: core.redis, keyPrefix: config.REDIS_KEY_PREFIX, model, log: core.log }),
    /** The long-poll of a status read (`?wait=`). */
    waitForDeployment: createDeploymentWaiter({ feed: core.statusFeed, get }),
    /** Status, commands, platform lines and the instances' output from a cursor on (the events stream). */
    followDeployment: createDeploymentFollower({
      feed: core.statusFeed,
      get,
      logs,
      docker: core.docker,
      temporal: core.temporal,
      log: core.log,
    }),
  };
}

export type DeploymentsContext = FeatureContext<Awaited<ReturnType<typeof composeDeployments>>>;
