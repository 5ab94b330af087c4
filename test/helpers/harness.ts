import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, type LogEntry, NativeConnection, Runtime } from '@temporalio/worker';
import type { DestinationStream } from 'pino';

import type { CloudAdapters } from '@activities/deployment/cloud';
import { createEngineVolumes } from '@activities/providers/engine-volumes';
import { ensureHostIsolation, isolationOptions } from '@activities/providers/host-firewall';
import { buildApp } from '@api/app';
import { composeApi } from '@api/compose';
import { parseConfig } from '@shared/config';
import { LABELS } from '@shared/constants';
import { connectMongo } from '@shared/db/mongo';
import { createLogStore } from '@shared/deployments/logs-store';
import { createDeploymentStore } from '@shared/deployments/store';
import { createDockerClient } from '@shared/engine/docker-client';
import { instanceId } from '@shared/instance';
import { createLogger } from '@shared/logger';
import { createProjectStore } from '@shared/projects/store';
import { createRedis } from '@shared/redis';
import { createS3Client } from '@shared/s3';
import { createSalesStore } from '@shared/sales/store';
import { createSecretStore } from '@shared/secrets/store';
import { createVault } from '@shared/secrets/vault';
import { createUploadStore } from '@shared/uploads/store';
import { createDeploymentWorker } from '@worker/create-worker';

/**
 * The api and a worker, in this test file's process, on the real services global-setup started.
 * Each file gets its own task queue so a file's workflows run on its own worker.
 */
let runtimeInstalled = false;

/**
 * Installs the Temporal runtime with a quiet logger; call before anything else creates the runtime. `capture`
 * receives every worker and activity log entry (a test reading what the worker logged); only warnings print.
 */
export function quietTemporalRuntime(capture?: (entry: LogEntry) => void): void {
  if (runtimeInstalled) return;
  // The worker's INFO lines (bundle sizes, state changes) would bury the test output.
  const quiet = new DefaultLogger('WARN');
  Runtime.install({
    logger: capture
      ? new DefaultLogger('DEBUG', (entry) => {
          capture(entry);
          if (entry.level === 'WARN' || entry.level === 'ERROR') quiet.log(entry.level, entry.message, entry.meta);
        })
      : quiet,
  });
  runtimeInstalled = true;
}

export async function startHarness(
  name: string,
  overrides: Record<string, string> = {},
  /** logDestination: read the api's log lines (with LOG_LEVEL overridden to info or debug). */
  opts: {
    worker?: boolean;
    logDestination?: DestinationStream;
    /** The worker's cloud adapters, pointed at a test's double of the cloud (default: the server's, from config). */
    cloudAdapters?: CloudAdapters;
  } = {},
) {
  quietTemporalRuntime();
  const taskQueue = `test-${name}-${process.pid}`;
  /** What this harness sets beyond the suite's environment: a worker process of its own must be given it too. */
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    TEMPORAL_TASK_QUEUE: taskQueue,
    MONGODB_DB: 'slipway_test',
    // Files share one Redis: their own prefix keeps per-address counters (127.0.0.1 for all) apart.
    REDIS_KEY_PREFIX: `test-${name}-${process.pid}:`,
    ...overrides,
  };
  const config = parseConfig({ ...process.env, ...env });
  const log = createLogger('test', config.LOG_LEVEL, opts.logDestination);
  const database = await connectMongo(config.MONGODB_URL, config.MONGODB_DB);
  const connection = await Connection.connect({ address: config.TEMPORAL_ADDRESS });
  const temporal = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE });
  const docker = createDockerClient(config.DOCKER_HOST);
  const s3 = createS3Client(config);
  const redis = createRedis(config.REDIS_URL);
  const redisClients = [redis];
  const api = await composeApi({ config, log, database, redis, temporal, docker, s3 });

  // As worker/main.ts does at start: tenant containers cannot reach the host nor private networks.
  if (opts.worker !== false) await ensureHostIsolation(isolationOptions(config));
  const workerConnection =
    opts.worker === false ? undefined : await NativeConnection.connect({ address: config.TEMPORAL_ADDRESS });
  const worker =
    workerConnection &&
    (await createDeploymentWorker({
      connection: workerConnection,
      namespace: config.TEMPORAL_NAMESPACE,
      taskQueue,
      store: createDeploymentStore(database.db),
      logs: createLogStore(database.db),
      sales: createSalesStore(database.db),
      allowPrivateWebhookTargets: config.ALLOW_PRIVATE_WEBHOOK_TARGETS,
      engine: {
        docker,
        publicHost: config.ENGINE_PUBLIC_HOST,
        bindIp: config.ENGINE_BIND_IP,
        allowPrivateRegistries: config.ALLOW_PRIVATE_REGISTRIES,
      },
      s3,
      uploads: createUploadStore(database.db),
      db: database.db,
      vault: createVault({ store: createSecretStore(database.db), key: config.SECRETS_KEY }),
      redis,
      config,
      ...(opts.cloudAdapters ? { cloudAdapters: opts.cloudAdapters } : {}),
    }));
  const running = worker?.run();

  const app = buildApp(api);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const extraServers: Server[] = [];
  const orgIds: string[] = [];
  /** Whatever a failed test left on the engine for this file's organisations goes with the harness. */
  const removeLeftovers = async () => {
    for (const orgId of orgIds) {
      const containers = await docker.listContainers({ all: true, filters: { label: [`${LABELS.orgId}=${orgId}`] } });
      for (const c of containers)
        await docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => undefined);
      // Images built from source for deployments a test left running.
      const images = await docker.listImages({ filters: { label: [`${LABELS.orgId}=${orgId}`] } });
      for (const i of images)
        await docker
          .getImage(i.Id)
          .remove({ force: true })
          .catch(() => undefined);
      const networks = await docker.listNetworks({ filters: { name: [`slipway-org-${orgId}`] } });
      for (const n of networks)
        await docker
          .getNetwork(n.Id)
          .remove()
          .catch(() => undefined);
    }
    // The storage of volumes and databases a test left (each a loop-mounted image, which outlives the process): this
    // harness's instance has a directory of its own under VOLUMES_DIR, so everything in it is this harness's.
    const storage = createEngineVolumes({ docker, instance: instanceId(config), dir: config.VOLUMES_DIR });
    const images = await fs.readdir(path.join(config.VOLUMES_DIR, instanceId(config))).catch(() => [] as string[]);
    for (const file of images.filter((f) => f.endsWith('.img')))
      await storage.remove(file.slice(0, -'.img'.length)).catch(() => undefined);
  };

  return {
    baseUrl,
    config,
    env,
    db: database.db,
    redis,
    docker,
    s3,
    identity: api.core.identity,
    temporal,
    taskQueue,
    /** A fresh organisation with an owner token: tests never see each other's data. */
    async newOrg(plan: 'free' | 'pro' | 'enterprise' = 'pro') {
      const org = await api.core.identity.bootstrap({ orgName: `test-${name}`, plan });
      orgIds.push(org.orgId);
      return org;
    },
    /** A fresh organisation (owner token) with one project of its own, as the builder's routes need. */
    async newOrgWithProject(plan: 'free' | 'pro' | 'enterprise' = 'pro') {
      const org = await this.newOrg(plan);
      const projectId = randomUUID();
      const now = new Date();
      await createProjectStore(database.db).insert({
        _id: projectId,
        orgId: org.orgId,
        name: `p-${projectId.slice(0, 8)}`,
        createdAt: now,
        updatedAt: now,
        createdBy: org.userId,
      });
      return { ...org, projectId };
    },
    /**
     * A second api process in all but name: its own app and stores over the same MongoDB, Temporal and engine.
     * `temporal`: its own Temporal client instead (one that cannot reach the server, one whose calls a test holds).
     */
    async secondApi(opts: { temporal?: Client } = {}): Promise<string> {
      const otherRedis = createRedis(config.REDIS_URL);
      redisClients.push(otherRedis);
      const other = buildApp(
        await composeApi({
          config,
          log,
          database,
          redis: otherRedis,
          temporal: opts.temporal ?? temporal,
          docker,
          s3: createS3Client(config),
        }),
      );
      const s: Server = await new Promise((resolve) => {
        const srv = other.listen(0, '127.0.0.1', () => resolve(srv));
      });
      extraServers.push(s);
      return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    },
    async stop() {
      // An event stream or long-poll a failed test left open would keep its server from ever closing.
      for (const s of [...extraServers, server]) s.closeAllConnections();
      for (const s of extraServers) await new Promise((resolve) => s.close(resolve));
      await new Promise((resolve) => server.close(resolve));
      worker?.shutdown();
      await running;
      await removeLeftovers();
      await workerConnection?.close();
      await connection.close();
      await database.close();
      for (const r of redisClients) await r.quit();
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
