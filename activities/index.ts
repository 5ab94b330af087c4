import type { S3Client } from '@aws-sdk/client-s3';
import type { Db } from 'mongodb';

import { createLinkSecretSealer } from '@shared/buckets/link-secrets';
import { scopedKeysFromConfig } from '@shared/buckets/scoped-keys';
import { createBucketStore } from '@shared/buckets/store';
import { createCloudCredentialStore } from '@shared/cloud/store';
import type { Config } from '@shared/config';
import { createCredentialSealer } from '@shared/databases/credentials';
import { createDatabaseStore } from '@shared/databases/store';
import type { EnvRefResolver } from '@shared/deployments/attachments';
import type { LogStore } from '@shared/deployments/logs-store';
import { createStatusModel, modelledReleases } from '@shared/deployments/read-model';
import {
  announcingDestroys,
  announcingLogs,
  announcingStatus,
  createStatusFeed,
} from '@shared/deployments/status-feed';
import type { DeploymentStore } from '@shared/deployments/store';
import { createDomainChecker } from '@shared/domains/check';
import { createDomainStore } from '@shared/domains/store';
import { createDomainVerifier } from '@shared/domains/verify';
import { edgeAddressing, edgeRouterFromConfig } from '@shared/edge';
import { instanceId } from '@shared/instance';
import type { Redis } from '@shared/redis';
import type { SalesStore } from '@shared/sales/store';
import { createEnvSealer } from '@shared/secrets/deployment-env';
import type { Vault } from '@shared/secrets/vault';
import type { UploadStore } from '@shared/uploads/store';
import { createEdgeReadings } from '@shared/usage/edge-counters';
import { createEdgeSampler } from '@shared/usage/edge-sampler';
import { createUsageRecords } from '@shared/usage/hourly';
import { createUsageSources } from '@shared/usage/sources';
import { createStorageLedger } from '@shared/usage/storage-ledger';
import { createVolumeStore } from '@shared/volumes/store';

import { createBucketDestroyHook } from './bucket/destroy';
import { appS3Address, createBucketEnvResolver, joinEnvResolvers } from './bucket/env-refs';
import { createBuilderGitActivities } from './builder-git';
import { createBuilderTurnActivities } from './builder-turn';
import { sandboxTurnHook } from './builder-turn/sandbox-hook';
import { createDatabaseActivities } from './database';
import { createDatabaseDestroyHook } from './database/destroy';
import { createDatabaseEnvResolver } from './database/env-refs';
import { createDatabaseSourceActivities } from './database-source';
import { createDeploymentActivities } from './deployment';
import type { BuildDeps } from './deployment/build';
import type { CloudAdapters } from './deployment/cloud';
import { createDomainActivities } from './domain';
import { createDomainDestroyHook } from './domain/destroy';
import { createMetricsActivities } from './metrics';
import { cloudAdaptersFrom } from './providers/cloud-adapters';
import { createEngineDatabases } from './providers/engine-databases';
import { createEngineLocal, type EngineLocalDeps } from './providers/engine-local';
import { createOrgNetworks } from './providers/engine-network';
import { createEngineVolumes } from './providers/engine-volumes';
import { s3ForwardFor } from './providers/host-firewall';
import { createReconcileActivities } from './reconcile';
import { createSandboxActivities } from './sandbox';
import { createUploadExpiryActivities } from './upload-expiry';
import { createUsageActivities } from './usage';
import { createVolumeActivities } from './volume';
import { createWebhookDeliveryActivities } from './webhook-delivery';

export interface ActivityDeps {
  store: DeploymentStore;
  logs: LogStore;
  sales: SalesStore;
  allowPrivateWebhookTargets: boolean;
  /** The instance label is added here, from the configuration. */
  engine: Omit<EngineLocalDeps, 'instance'>;
  s3: S3Client;
  uploads: UploadStore;
  vault: Pick<Vault, 'revealForGit'>;
  /** Bounds one organisation's builds across workers (BUILD_CONCURRENCY_PER_ORG); per worker without it. */
  redis?: Redis;
  /**
   * The AI builder's records (sessions, checkpoints, turn events) and AI providers, and volumes' records; without it
   * no builder turn and no volume workflow runs, and no release mounts a volume.
   */
  db?: Db;
  /**
   * Reads the values of deployments' environment references (a database's connection URL) as their containers
   * start; without it a release that has references fails to start, saying so.
   */
  envRefs?: EnvRefResolver;
  /** The cloud providers' adapters (activities/providers/cloud-*.ts), built by the worker from its configuration. */
  cloudAdapters?: CloudAdapters;
  config: BuildDeps['config'] &
    Pick<
      Config,
      | 'UPLOAD_TTL_S'
      | 'SECRETS_KEY'
      | 'SLIPWAY_INSTANCE'
      | 'MONGODB_URL'
      | 'MONGODB_DB'
      | 'TEMPORAL_TASK_QUEUE'
      | 'RECONCILE_GRACE_S'
      | 'EDGE_ADMIN_URL'
      | 'EDGE_DOMAIN'
      | 'EDGE_PORT'
      | 'EDGE_BIND_IP'
      | 'EDGE_UPSTREAMS_DIR'
      | 'EDGE_TLS_PORT'
      | 'EDGE_TLS_ISSUER'
      | 'ACME_EMAIL'
      | 'DNS_RESOLVERS'
      | 'DNS_TIMEOUT_MS'
      | 'EDGE_PUBLIC_IPS'
      | 'METRICS_RETENTION_H'
      | 'METRICS_SAMPLE_S'
      | 'REDIS_KEY_PREFIX'
      | 'S3_BUCKET'
      | 'ALLOW_PRIVATE_AI_PROVIDERS'
      | 'AI_RETRY_ATTEMPTS'
      | 'AI_RETRY_MAX_DELAY_S'
      | 'AI_IDLE_TIMEOUT_S'
      | 'SANDBOX_READY_TIMEOUT_S'
      | 'SANDBOX_INSTALL_TIMEOUT_S'
      | 'SANDBOX_IDLE_S'
      | 'VOLUMES_DIR'
      | 'DATABASE_IMAGE_POSTGRESQL'
      | 'DATABASE_IMAGE_MARIADB'
      | 'DATABASE_IMAGE_REDIS'
      | 'S3_ENDPOINT'
      | 'S3_APP_ENDPOINT'
      | 'S3_REGION'
      | 'S3_FORCE_PATH_STYLE'
      | 'S3_ADMIN'
      | 'MC_BINARY'
      | 'S3_ACCESS_KEY_ID'
      | 'S3_SECRET_ACCESS_KEY'
      | 'ALLOW_PRIVATE_DATABASE_SOURCES'
      | 'SOURCE_QUERY_TIMEOUT_MS'
      | 'SOURCE_QUERY_MAX_BYTES'
      | 'CLOUD_A_RUN_ENDPOINT'
      | 'CLOUD_A_LOGGING_ENDPOINT'
      | 'CLOUD_A_TOKEN_URL'
      | 'CLOUD_B_ARM_ENDPOINT'
      | 'CLOUD_B_LOGS_ENDPOINT'
    >;
}

/**
 * Every activity the worker registers, built from its dependencies: one group per workflow (activities/<workflow>/,
 * as workflows/<workflow>/), each proxied by its own workflow under the group's type.
 */
export function createActivities(deps: ActivityDeps) {
  const instance = instanceId(deps.config);
  // With the embedded store on loopback, every tenant bridge routes its one forwarded port (host-firewall.ts).
  const loopbackForward = s3ForwardFor(deps.config) !== undefined;
  const engine = createEngineLocal({ ...deps.engine, instance, loopbackForward });
  // Status changes, log lines and destroys wake the api's event streams and long-polls (`?wait=`) at once.
  const feed = deps.redis && createStatusFeed({ redis: deps.redis, keyPrefix: deps.config.REDIS_KEY_PREFIX });
  // What status reads show, rewritten after each write that changes it and before its announcement.
  const model =
    deps.redis && createStatusModel({ redis: deps.redis, keyPrefix: deps.config.REDIS_KEY_PREFIX, store: deps.store });
  const logs = announcingLogs(deps.logs, feed);
  const env = createEnvSealer(deps.config.SECRETS_KEY);
  const edge = { router: edgeRouterFromConfig(deps.config), ...edgeAddressing(deps.config) };
  const volumeStorage =
    deps.db && createEngineVolumes({ docker: deps.engine.docker, instance, dir: deps.config.VOLUMES_DIR });
  const volumeStore = deps.db && createVolumeStore(deps.db);
  const databaseStore = deps.db && createDatabaseStore(deps.db);
  const ledger = deps.db && createStorageLedger(deps.db);
  const edgeReadings = deps.db && createEdgeReadings(deps.db);
  const credentials = createCredentialSealer(deps.config.SECRETS_KEY);
  const bucketStore = deps.db && createBucketStore(deps.db);
  const scopedKeys = scopedKeysFromConfig(deps.config);
  // A release's references to databases read their URLs here, as its containers start, and linked buckets their
  // address and key.
  const envRefs =
    deps.envRefs ??
    (databaseStore &&
      bucketStore &&
      joinEnvResolvers(
        createDatabaseEnvResolver({ store: databaseStore, sealer: credentials }),
        createBucketEnvResolver({
          store: bucketStore,
          sealer: createLinkSecretSealer(deps.config.SECRETS_KEY),
          address: appS3Address(
            deps.config,
            createOrgNetworks({ docker: deps.engine.docker, instance, loopbackForward }),
            (id) => deps.engine.docker.getNetwork(id).inspect(),
          ),
        }),
      ));
  const domainStore = deps.db && createDomainStore(deps.db);
  const afterDestroy = databaseStore &&
    bucketStore &&
    domainStore && [
      createDatabaseDestroyHook({ store: databaseStore, destroyIntent: (id) => deps.store.destroyIntent(id) }),
      createBucketDestroyHook({ store: bucketStore, keys: scopedKeys }),
      createDomainDestroyHook({ store: domainStore, router: edge.router }),
    ];
  const cloud = deps.db && {
    credentials: createCloudCredentialStore(deps.db, deps.config.SECRETS_KEY),
    adapters: deps.cloudAdapters ?? cloudAdaptersFrom(deps.config),
    releaseEnv: (deploymentId: string, revision: number) => deps.store.releases.get(deploymentId, revision),
    record: async (deploymentId: string) => {
      const found = await deps.store.findAny(deploymentId);
      if (!found) throw new Error(`deployment ${deploymentId} has no record`);
      return found;
    },
    env,
    docker: deps.engine.docker,
    lifecycle: (ids: string[]) => deps.store.lifecycle(ids),
  };
  return {
    ...createDeploymentActivities({
      ...deps,
      ...(cloud ? { cloud } : {}),
      ...(envRefs ? { envRefs } : {}),
      ...(afterDestroy
        ? {
            afterDestroy: async (deploymentId: string) => {
              for (const hook of afterDestroy) await hook(deploymentId);
            },
          }
        : {}),
      attachments: deps.store.attachments,
      ...(volumeStorage && volumeStore ? { volumes: { store: volumeStore, storage: volumeStorage } } : {}),
      logs,
      store: announcingStatus(deps.store, feed, model),
      releases: modelledReleases(deps.store.releases, model),
      engine,
      env,
      edge,
      build: {
        docker: deps.engine.docker,
        instance,
        s3: deps.s3,
        uploads: deps.uploads,
        vault: deps.vault,
        logs,
        config: deps.config,
        ...(deps.redis ? { redis: deps.redis } : {}),
      },
    }),
    ...createReconcileActivities({
      docker: deps.engine.docker,
      store: announcingDestroys(deps.store, feed, model),
      env,
      instance,
      graceS: deps.config.RECONCILE_GRACE_S,
      // Routes and upstream files the router lost are put back from the records and the running instances.
      instances: engine,
      edge,
      ...(domainStore
        ? {
            verifiedDomains: async () =>
              (await domainStore.verified()).map((d) => ({
                domainId: d._id,
                hostname: d.hostname,
                stableHost: d.stableHost,
              })),
          }
        : {}),
    }),
    ...createMetricsActivities({
      docker: deps.engine.docker,
      metrics: deps.store.metrics,
      store: deps.store,
      instance,
      retentionH: deps.config.METRICS_RETENTION_H,
      ...(edgeReadings
        ? {
            edge: {
              sampler: createEdgeSampler({
                router: edge.router,
                edge: deps.config.EDGE_ADMIN_URL,
                readings: edgeReadings,
              }),
              readings: edgeReadings,
            },
          }
        : {}),
    }),
    // Usage per hour, rolled up from the samples and readings above before their sweep.
    ...(deps.db
      ? createUsageActivities({
          records: createUsageRecords(deps.db),
          sources: createUsageSources(deps.db, { sampleEveryS: deps.config.METRICS_SAMPLE_S }),
          retentionH: deps.config.METRICS_RETENTION_H,
          sampleEveryS: deps.config.METRICS_SAMPLE_S,
        })
      : {}),
    ...(deps.db
      ? createBuilderTurnActivities({
          db: deps.db,
          s3: deps.s3,
          config: deps.config,
          ...(deps.redis ? { redis: deps.redis } : {}),
          onCheckpoint: sandboxTurnHook({ db: deps.db, config: deps.config }),
        })
      : {}),
    // The builder's live previews: containers like deployments', with the engine's addressing.
    ...(deps.db
      ? createSandboxActivities({
          docker: deps.engine.docker,
          db: deps.db,
          s3: deps.s3,
          instance,
          engine: deps.engine,
          config: deps.config,
        })
      : {}),
    ...(deps.db
      ? createBuilderGitActivities({ db: deps.db, s3: deps.s3, vault: deps.vault, config: deps.config })
      : {}),
    // Persistent volumes: their storage on the engine's host, and their records.
    ...(volumeStorage && volumeStore && ledger
      ? createVolumeActivities({ storage: volumeStorage, store: volumeStore, ledger })
      : {}),
    // Databases: their servers (containers on the org's network, data on a volume of their own), dumps and loads.
    ...(volumeStorage && databaseStore && ledger
      ? createDatabaseActivities({
          engine: createEngineDatabases({
            docker: deps.engine.docker,
            instance,
            volumes: volumeStorage,
            networks: createOrgNetworks({ docker: deps.engine.docker, instance, loopbackForward }),
            images: {
              postgresql: deps.config.DATABASE_IMAGE_POSTGRESQL,
              mariadb: deps.config.DATABASE_IMAGE_MARIADB,
              redis: deps.config.DATABASE_IMAGE_REDIS,
            },
          }),
          storage: volumeStorage,
          store: databaseStore,
          ledger,
          sealer: credentials,
          s3: deps.s3,
          bucket: deps.config.S3_BUCKET,
        })
      : {}),
    // Questions asked of database sources: the model writes SQL, which runs through the same checks as a query.
    ...(deps.db
      ? createDatabaseSourceActivities({ db: deps.db, docker: deps.engine.docker, config: deps.config })
      : {}),
    // Custom domains: DNS checks (DNS_RESOLVERS) and their routes on the edge router's TLS server.
    ...(domainStore
      ? createDomainActivities({
          store: domainStore,
          verifier: createDomainVerifier({
            store: domainStore,
            checker: createDomainChecker({
              resolvers: deps.config.DNS_RESOLVERS,
              timeoutMs: deps.config.DNS_TIMEOUT_MS,
              publicIps: deps.config.EDGE_PUBLIC_IPS,
            }),
          }),
          router: edge.router,
        })
      : {}),
    ...createUploadExpiryActivities({ store: deps.uploads, s3: deps.s3, bucket: deps.config.S3_BUCKET }),
    ...createWebhookDeliveryActivities({ store: deps.sales, allowPrivateTargets: deps.allowPrivateWebhookTargets }),
  };
}

/** The union of every group: what the worker registers (each workflow proxies only its own group). */
export type Activities = ReturnType<typeof createActivities>;
