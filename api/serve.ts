import { Client } from '@temporalio/client';

import { config } from '@shared/config';
import { connectMongo } from '@shared/db/mongo';
import { createDockerClient } from '@shared/engine/docker-client';
import { createLogger } from '@shared/logger';
import { logUnexpectedErrors } from '@shared/process-guard';
import { createRedis } from '@shared/redis';
import { createS3Client } from '@shared/s3';
import { connectTemporal, ensureSearchAttributes } from '@shared/temporal';

import { buildApp } from './app';
import { composeApi } from './compose';

/** One api process: connects to the services, serves PORT, and closes them on SIGINT/SIGTERM. */
export async function serveApi() {
  const cfg = config();
  const log = createLogger('api', cfg.LOG_LEVEL);
  logUnexpectedErrors(log, 'api');
  const database = await connectMongo(cfg.MONGODB_URL, cfg.MONGODB_DB);
  const connection = await connectTemporal(cfg);
  await ensureSearchAttributes(connection, cfg.TEMPORAL_NAMESPACE);
  const temporal = new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE });
  const redis = createRedis(cfg.REDIS_URL);
  const api = await composeApi({
    config: cfg,
    log,
    database,
    redis,
    temporal,
    docker: createDockerClient(cfg.DOCKER_HOST),
    s3: createS3Client(cfg),
  });
  const server = buildApp(api).listen(cfg.PORT, cfg.HOST, () =>
    log.info({ port: cfg.PORT, host: cfg.HOST }, 'api listening'),
  );
  let closing = false;
  const shutdown = () => {
    // A cluster's processes can be told twice (the terminal's Ctrl-C and the primary passing on SIGTERM).
    if (closing) return;
    closing = true;
    server.close(() => {
      void connection
        .close()
        .then(() => database.close())
        .then(() => redis.quit())
        .then(() => process.exit(0));
    });
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}
