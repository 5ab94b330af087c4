import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { type CommandStartedEvent, MongoClient } from 'mongodb';

import { buildApp } from '@api/app';
import { composeApi } from '@api/compose';
import { createLogger, type Logger } from '@shared/logger';
import { createRedis } from '@shared/redis';

import type { Harness } from './harness';

/**
 * Another api over a harness's services, as a second api process would be: its own MongoDB client (each command it
 * sends handed to `onCommand`), its own Redis connections and caches, its own HTTP server on a free port. What tests
 * of what crosses processes, and of the database reads a request costs, stand on.
 */
export async function startSecondApi(
  h: Pick<Harness, 'config' | 'temporal' | 'docker' | 's3'>,
  opts: { onCommand?: (e: CommandStartedEvent) => void; log?: Logger } = {},
) {
  const mongo = await MongoClient.connect(h.config.MONGODB_URL, { monitorCommands: true });
  if (opts.onCommand) mongo.on('commandStarted', opts.onCommand);
  const redis = createRedis(h.config.REDIS_URL);
  const app = buildApp(
    await composeApi({
      config: h.config,
      log: opts.log ?? createLogger('test', 'warn'),
      database: { client: mongo, db: mongo.db(h.config.MONGODB_DB), close: () => mongo.close() },
      redis,
      temporal: h.temporal,
      docker: h.docker,
      s3: h.s3,
    }),
  );
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      // Streams a failed test left open would keep the server from closing.
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await mongo.close();
      await redis.quit();
    },
  };
}
