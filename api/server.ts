import { Client } from '@temporalio/client';

import { config, ConfigError } from '../shared/config';
import { createDeploymentStore } from '../shared/db/deployments-store';
import { createIdentityStore } from '../shared/db/identity-store';
import { connectMongo } from '../shared/db/mongo';
import { createIdentityService } from '../shared/identity';
import { createLogger } from '../shared/logger';
import { connectTemporal } from '../shared/temporal';
import { buildApp } from './app';
import { createDeploymentService } from './deployments/service';

async function main() {
  const cfg = config();
  const log = createLogger('api', cfg.LOG_LEVEL);
  const database = await connectMongo(cfg.MONGODB_URL, cfg.MONGODB_DB);
  const connection = await connectTemporal(cfg);
  const temporal = new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE });
  const identityStore = createIdentityStore(database.db);
  const deploymentStore = createDeploymentStore(database.db);
  await Promise.all([identityStore.ensureIndexes(), deploymentStore.ensureIndexes()]);
  const app = buildApp({
    config: cfg,
    log,
    db: database.db,
    temporal,
    identity: createIdentityService({ store: identityStore }),
    deployments: createDeploymentService({ store: deploymentStore, temporal, config: cfg }),
  });
  const server = app.listen(cfg.PORT, cfg.HOST, () => log.info({ port: cfg.PORT, host: cfg.HOST }, 'api listening'));
  const shutdown = () => {
    server.close(() => {
      void connection
        .close()
        .then(() => database.close())
        .then(() => process.exit(0));
    });
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  console.error(
    `slipway api: ${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  process.exit(1);
});
