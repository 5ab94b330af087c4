import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';

import { createDockerClient } from '../../activities/providers/docker-client';
import { buildApp } from '../../api/app';
import { createDeploymentService } from '../../api/deployments/service';
import { parseConfig } from '../../shared/config';
import { createDeploymentStore } from '../../shared/db/deployments-store';
import { createIdentityStore } from '../../shared/db/identity-store';
import { connectMongo } from '../../shared/db/mongo';
import { createIdentityService } from '../../shared/identity';
import { createLogger } from '../../shared/logger';
import { createDeploymentWorker } from '../../worker/create-worker';

/**
 * The api and a worker, in this test file's process, on the real services global-setup started.
 * Each file gets its own task queue so a file's workflows run on its own worker.
 */
let runtimeInstalled = false;

export async function startHarness(name: string) {
  if (!runtimeInstalled) {
    // The worker's INFO lines (bundle sizes, state changes) would bury the test output.
    Runtime.install({ logger: new DefaultLogger('WARN') });
    runtimeInstalled = true;
  }
  const taskQueue = `test-${name}-${process.pid}`;
  const config = parseConfig({
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    TEMPORAL_TASK_QUEUE: taskQueue,
    MONGODB_DB: 'slipway_test',
  });
  const log = createLogger('test', config.LOG_LEVEL);
  const database = await connectMongo(config.MONGODB_URL, config.MONGODB_DB);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const docker = createDockerClient(config.DOCKER_HOST);
  const identityStore = createIdentityStore(database.db);
  const deploymentStore = createDeploymentStore(database.db);
  await Promise.all([identityStore.ensureIndexes(), deploymentStore.ensureIndexes()]);
  const identity = createIdentityService({ store: identityStore });

  const workerConnection = await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const worker = await createDeploymentWorker({
    connection: workerConnection,
    namespace: config.TEMPORAL_NAMESPACE,
    taskQueue,
    store: deploymentStore,
    engine: { docker, publicHost: config.ENGINE_PUBLIC_HOST, bindIp: config.ENGINE_BIND_IP },
  });
  const running = worker.run();

  const app = buildApp({
    config,
    log,
    db: database.db,
    temporal,
    identity,
    deployments: createDeploymentService({ store: deploymentStore, temporal, config }),
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    baseUrl,
    config,
    db: database.db,
    docker,
    identity,
    temporal,
    taskQueue,
    /** A fresh organisation with an owner token: tests never see each other's data. */
    newOrg: (plan: 'free' | 'pro' | 'enterprise' = 'pro') => identity.bootstrap({ orgName: `test-${name}`, plan }),
    async stop() {
      await new Promise((resolve) => server.close(resolve));
      worker.shutdown();
      await running;
      await workerConnection.close();
      await connection.close();
      await database.close();
    },
  };
}

export type Harness = Awaited<ReturnType<typeof startHarness>>;

/** Polls until `check` returns a value, or fails with the last thing it saw. */
export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
