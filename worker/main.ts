import { NativeConnection } from '@temporalio/worker';

import { config, ConfigError } from '../shared/config';
import { createDeploymentStore } from '../shared/db/deployments-store';
import { createLogStore } from '../shared/db/logs-store';
import { connectMongo } from '../shared/db/mongo';
import { createSalesStore } from '../shared/db/sales-store';
import { createDockerClient } from '../shared/engine/docker-client';
import { createLogger } from '../shared/logger';
import { createDeploymentWorker } from './create-worker';
import { ensureSearchAttributes } from './search-attributes';

async function main() {
  const cfg = config();
  const log = createLogger('worker', cfg.LOG_LEVEL);
  const database = await connectMongo(cfg.MONGODB_URL, cfg.MONGODB_DB);
  const connection = await NativeConnection.connect({
    address: cfg.TEMPORAL_ADDRESS,
    tls: cfg.TEMPORAL_TLS || Boolean(cfg.TEMPORAL_API_KEY),
    apiKey: cfg.TEMPORAL_API_KEY,
  });
  await ensureSearchAttributes(connection, cfg.TEMPORAL_NAMESPACE);
  const store = createDeploymentStore(database.db);
  const logs = createLogStore(database.db);
  const worker = await createDeploymentWorker({
    connection,
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue: cfg.TEMPORAL_TASK_QUEUE,
    store,
    logs,
    sales: createSalesStore(database.db),
    allowPrivateWebhookTargets: cfg.ALLOW_PRIVATE_WEBHOOK_TARGETS,
    engine: {
      docker: createDockerClient(cfg.DOCKER_HOST),
      publicHost: cfg.ENGINE_PUBLIC_HOST,
      bindIp: cfg.ENGINE_BIND_IP,
    },
  });
  log.info({ taskQueue: worker.options.taskQueue }, 'worker polling');
  // Worker.run resolves after SIGINT/SIGTERM once in-flight tasks have drained.
  await worker.run();
  await connection.close();
  await database.close();
}

main().catch((err: unknown) => {
  console.error(
    `slipway worker: ${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  process.exit(1);
});
