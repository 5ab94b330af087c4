import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';

import { createEngineVolumes } from '@activities/providers/engine-volumes';
import { ensureHostIsolation, isolationOptions } from '@activities/providers/host-firewall';
import { config, ConfigError } from '@shared/config';
import { connectMongo } from '@shared/db/mongo';
import { createLogStore } from '@shared/deployments/logs-store';
import { createDeploymentStore } from '@shared/deployments/store';
import { createDockerClient } from '@shared/engine/docker-client';
import { instanceId } from '@shared/instance';
import { createLogger } from '@shared/logger';
import { logUnexpectedErrors } from '@shared/process-guard';
import { createRedis } from '@shared/redis';
import { createS3Client } from '@shared/s3';
import { createSalesStore } from '@shared/sales/store';
import { createSecretStore } from '@shared/secrets/store';
import { createVault } from '@shared/secrets/vault';
import { ensureSearchAttributes } from '@shared/temporal';
import { createUploadStore } from '@shared/uploads/store';

import { createDeploymentWorker } from './create-worker';
import {
  ensureMetricsSchedules,
  ensureReconcileSchedule,
  ensureUploadExpirySchedule,
  ensureUsageRollupSchedule,
  ensureWebhookOutboxSchedule,
} from './schedules';
import { bundleInChildProcess } from './workflow-bundle';

async function main() {
  const cfg = config();
  const log = createLogger('worker', cfg.LOG_LEVEL);
  logUnexpectedErrors(log, 'worker');
  // Tenant containers must not reach services of this host nor private networks (host-firewall.ts).
  const isolation = await ensureHostIsolation(isolationOptions(cfg));
  if (!isolation.applied) {
    log.warn(
      { reason: isolation.reason },
      'host isolation of tenant containers is NOT installed: they can reach services of the engine host and private networks; install the rules by hand (README, "Tenant isolation")',
    );
  }
  // A host restart unmounts every volume's image: mounted again before a container of ours needs one.
  const docker = createDockerClient(cfg.DOCKER_HOST);
  const remounted = await createEngineVolumes({ docker, instance: instanceId(cfg), dir: cfg.VOLUMES_DIR }).remountAll();
  if (remounted.mounted > 0) log.info({ mounted: remounted.mounted }, 'volume images mounted again');
  for (const f of remounted.failed)
    log.warn(f, 'a volume image could not be mounted again; its containers cannot start');
  const database = await connectMongo(cfg.MONGODB_URL, cfg.MONGODB_DB);
  const connection = await NativeConnection.connect({
    address: cfg.TEMPORAL_ADDRESS,
    tls: cfg.TEMPORAL_TLS || Boolean(cfg.TEMPORAL_API_KEY),
    apiKey: cfg.TEMPORAL_API_KEY,
  });
  await ensureSearchAttributes(connection, cfg.TEMPORAL_NAMESPACE);
  const store = createDeploymentStore(database.db);
  const logs = createLogStore(database.db);
  // Builds of one organisation are bounded across workers by leases in Redis (shared/build/org-leases.ts).
  const redis = createRedis(cfg.REDIS_URL);
  const worker = await createDeploymentWorker({
    workflowBundle: await bundleInChildProcess(),
    connection,
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    store,
    logs,
    sales: createSalesStore(database.db),
    allowPrivateWebhookTargets: cfg.ALLOW_PRIVATE_WEBHOOK_TARGETS,
    engine: {
      docker,
      publicHost: cfg.ENGINE_PUBLIC_HOST,
      bindIp: cfg.ENGINE_BIND_IP,
      ...(cfg.EDGE_UPSTREAM_HOST ? { upstreamHost: cfg.EDGE_UPSTREAM_HOST } : {}),
      allowPrivateRegistries: cfg.ALLOW_PRIVATE_REGISTRIES,
    },
    s3: createS3Client(cfg),
    uploads: createUploadStore(database.db),
    db: database.db,
    vault: createVault({ store: createSecretStore(database.db), key: cfg.SECRETS_KEY }),
    redis,
    config: cfg,
  });
  await ensureUploadExpirySchedule(new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE }), {
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    everyS: cfg.UPLOAD_EXPIRY_SWEEP_S,
  });
  await ensureReconcileSchedule(new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE }), {
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    everyS: cfg.RECONCILE_EVERY_S,
  });
  await ensureWebhookOutboxSchedule(new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE }), {
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    everyS: cfg.WEBHOOK_OUTBOX_SWEEP_S,
    sweep: { retryDelaysS: cfg.WEBHOOK_RETRY_DELAYS_S, finalAttemptAfterS: cfg.WEBHOOK_FINAL_ATTEMPT_AFTER_S },
  });
  await ensureMetricsSchedules(new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE }), {
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    sampleEveryS: cfg.METRICS_SAMPLE_S,
    sweepEveryS: cfg.METRICS_SWEEP_S,
  });
  await ensureUsageRollupSchedule(new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE }), {
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    everyS: cfg.USAGE_ROLLUP_S,
  });
  log.info({ taskQueue: worker.options.taskQueue, instance: instanceId(cfg) }, 'worker polling');
  // Worker.run resolves after SIGINT/SIGTERM once in-flight tasks have drained.
  await worker.run();
  await connection.close();
  await database.close();
  redis.disconnect();
}

main().catch((err: unknown) => {
  console.error(
    `slipway worker: ${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  process.exit(1);
});
