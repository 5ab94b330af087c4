import type { S3Client } from '@aws-sdk/client-s3';
import type { Client } from '@temporalio/client';
import type Docker from 'dockerode';

import { createAuditStore } from '../shared/audit/store';
import { createAuthz } from '../shared/authz/authorize';
import { createGitSourceCheck } from '../shared/build/git-source';
import type { Config } from '../shared/config';
import type { Database } from '../shared/db/mongo';
import { createLogStore } from '../shared/deployments/logs-store';
import { createStatusFeed } from '../shared/deployments/status-feed';
import { createDeploymentStore } from '../shared/deployments/store';
import { createIdentityService } from '../shared/identity/service';
import { createIdentityStore } from '../shared/identity/store';
import { limitRules } from '../shared/limits';
import { createKeyedLock } from '../shared/locks';
import type { Logger } from '../shared/logger';
import { createProjectStore } from '../shared/projects/store';
import type { Redis } from '../shared/redis';
import { createSalesStore } from '../shared/sales/store';
import { createEnvSealer } from '../shared/secrets/deployment-env';
import { createSecretStore } from '../shared/secrets/store';
import { createVault } from '../shared/secrets/vault';
import { createUploadStore } from '../shared/uploads/store';
import type { AppDeps } from './app';
import { composeBuilder } from './features/builder/compose';
import { createDeploymentFollower } from './features/deployments/events';
import { createDeploymentObserver } from './features/deployments/observe';
import { createQuota, quotaRecords } from './features/deployments/quota';
import { createDeploymentService } from './features/deployments/service';
import { createDeploymentWaiter } from './features/deployments/wait';
import { createProjectService } from './features/projects/service';
import { createSalesService } from './features/sales/service';
import { createUploadService } from './features/uploads/service';
import { createUserService } from './features/users/service';
import { createRateLimiters } from './http/rate-limit';

/** Builds every store and service of the api from its connections: used by server.ts and by the tests alike. */
export async function composeApi(c: {
  config: Config;
  log: Logger;
  database: Database;
  /** Rate limits and quotas (atomic where FerretDB is not); the caller closes it. */
  redis: Redis;
  temporal: Client;
  docker: Docker;
  s3: S3Client;
}): Promise<AppDeps> {
  const { db } = c.database;
  const identityStore = createIdentityStore(db);
  const deploymentStore = createDeploymentStore(db);
  const logStore = createLogStore(db);
  const uploadStore = createUploadStore(db);
  const salesStore = createSalesStore(db);
  const secretStore = createSecretStore(db);
  const auditStore = createAuditStore(db);
  const projectStore = createProjectStore(db);
  // Sequential on purpose: FerretDB handles concurrent index builds poorly.
  for (const store of [identityStore, deploymentStore, logStore, uploadStore, salesStore, secretStore])
    await store.ensureIndexes();
  for (const store of [auditStore, projectStore]) await store.ensureIndexes();
  const limiters = createRateLimiters(c.redis, c.config.REDIS_KEY_PREFIX, limitRules(c.config));
  const quota = createQuota({
    redis: c.redis,
    keyPrefix: c.config.REDIS_KEY_PREFIX,
    records: quotaRecords(db, c.temporal),
    leaseS: c.config.QUOTA_LEASE_S,
    resyncS: c.config.QUOTA_RESYNC_S,
  });
  const vault = createVault({ store: secretStore, key: c.config.SECRETS_KEY });
  const identity = createIdentityService({ store: identityStore });
  const authz = createAuthz({ members: projectStore });
  // Member and role changes that must keep an admin (an owner) are serialised per project (per org) in Redis.
  const lock = createKeyedLock(c.redis, c.config.REDIS_KEY_PREFIX);
  // One of each for every feature that checks a Git source or seals environment values.
  const gitSource = createGitSourceCheck({ vault, config: c.config });
  const envSealer = createEnvSealer(c.config.SECRETS_KEY);
  const statusFeed = createStatusFeed({ redis: c.redis, keyPrefix: c.config.REDIS_KEY_PREFIX, log: c.log });
  const deployments = createDeploymentService({
    store: deploymentStore,
    logs: logStore,
    feed: statusFeed,
    uploads: uploadStore,
    projects: projectStore,
    authz,
    env: envSealer,
    git: gitSource,
    temporal: c.temporal,
    docker: c.docker,
    log: c.log,
    quota,
    config: c.config,
  });
  return {
    config: c.config,
    log: c.log,
    db,
    redis: c.redis,
    temporal: c.temporal,
    limiters,
    identity,
    authz,
    auditTrail: auditStore,
    deployments,
    observe: createDeploymentObserver({
      docker: c.docker,
      releases: deploymentStore.releases,
      metrics: deploymentStore.metrics,
      logs: logStore,
      config: c.config,
    }),
    waitForDeployment: createDeploymentWaiter({
      feed: statusFeed,
      get: (principal, id) => deployments.get(principal, id),
    }),
    followDeployment: createDeploymentFollower({
      feed: statusFeed,
      get: (principal, id) => deployments.get(principal, id),
      logs: logStore,
    }),
    uploads: createUploadService({ store: uploadStore, s3: c.s3, config: c.config }),
    sales: createSalesService({ store: salesStore, temporal: c.temporal, config: c.config }),
    vault,
    gitSource,
    projects: createProjectService({
      store: projectStore,
      git: gitSource,
      deployments,
      authz,
      users: identity,
      lock,
    }),
    users: createUserService({ identity, lock }),
    ...(await composeBuilder({
      db,
      s3: c.s3,
      redis: c.redis,
      temporal: c.temporal,
      config: c.config,
      projects: projectStore,
    })),
  };
}
