import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Client } from '@temporalio/client';
import pino from 'pino';

import { config } from '@shared/config';
import { connectMongo } from '@shared/db/mongo';
import { createDockerClient } from '@shared/engine/docker-client';
import { AppError } from '@shared/errors';
import { createLogger } from '@shared/logger';
import { createRedis } from '@shared/redis';
import { createS3Client } from '@shared/s3';
import { connectTemporal } from '@shared/temporal';

import { composeApi } from '../compose';
import { collectTools, createMcpServer } from './server';

/**
 * `slipway mcp`: the same tools as /mcp, over stdio, for an agent on the machine that runs Slipway. It does not
 * proxy to the HTTP api: it composes the api's services in this process from the api's own configuration (the
 * same MONGODB_URL, TEMPORAL_ADDRESS, REDIS_URL … variables) and runs the tools over them, so there is one
 * implementation of every tool and the same authorization, limits and audit trail. The caller is the token in
 * SLIPWAY_TOKEN, checked again on every call, so revoking it stops the agent at once. stdout carries the protocol
 * only; logs go to stderr.
 */
export async function serveStdio(env: NodeJS.ProcessEnv = process.env): Promise<void> {
  const token = env.SLIPWAY_TOKEN;
  if (!token) throw new AppError('INVALID_TOKEN', 'slipway mcp needs an access token in SLIPWAY_TOKEN.');
  const cfg = config();
  const log = createLogger('mcp', cfg.LOG_LEVEL, pino.destination(2));
  const database = await connectMongo(cfg.MONGODB_URL, cfg.MONGODB_DB);
  const connection = await connectTemporal(cfg);
  const redis = createRedis(cfg.REDIS_URL);
  const { core, features } = await composeApi({
    config: cfg,
    log,
    database,
    redis,
    temporal: new Client({ connection, namespace: cfg.TEMPORAL_NAMESPACE }),
    docker: createDockerClient(cfg.DOCKER_HOST),
    s3: createS3Client(cfg),
  });
  // Checked once now, so a wrong token fails at start with one line rather than on the agent's first call.
  await core.identity.authenticate(token);
  const server = createMcpServer(core, collectTools(features.tools), {
    principal: () => core.identity.authenticate(token),
    userAgent: 'slipway mcp (stdio)',
  });
  const closed = new Promise<void>((resolve) => {
    server.onclose = resolve;
  });
  await server.connect(new StdioServerTransport());
  // The agent closing our stdin is the end of the session (the SDK's transport waits for more otherwise).
  process.stdin.once('end', () => void server.close());
  await closed;
  await connection.close();
  await database.close();
  await redis.quit();
}
