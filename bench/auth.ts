// What one authenticated read costs: GET /compat/providers (a constant answer) against /healthz, on FerretDB and
// Redis started for the run. The api runs in this process so its MongoDB commands can be counted per request;
// autocannon runs as a process of its own so it does not share the api's event loop.
// `node --cpu-prof --import tsx bench/auth.ts` profiles the api while autocannon loads it.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { Client as TemporalClient, Connection } from '@temporalio/client';
import { MongoClient } from 'mongodb';

import { buildApp } from '@api/app';
import { composeApi } from '@api/compose';
import { startStack } from '@scripts/stack';
import { mongodb, redis as redisPart } from '@scripts/stack/parts';
import { parseConfig } from '@shared/config';
import { createDockerClient } from '@shared/engine/docker-client';
import { createLogger } from '@shared/logger';
import { createRedis } from '@shared/redis';
import { createS3Client } from '@shared/s3';

import { median, percentile } from './harness';

const run = promisify(execFile);
const SEQUENTIAL = 500;
const LOAD_S = Number(process.env.BENCH_AUTH_SECONDS ?? 10);
const CONNECTIONS = 10;

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-bench-auth-'));
  // Only what an authenticated read touches: no Temporal, object store or engine is called on this path.
  const stack = await startStack({ dataDir, ports: 'free', headless: true, parts: [mongodb, redisPart] });
  const config = parseConfig({
    ...process.env,
    ...stack.env,
    LOG_LEVEL: 'warn',
    MONGODB_DB: 'slipway',
    RATE_LIMIT_COMPAT_READS_PER_MIN: '100000000',
    SECRETS_KEY: randomBytes(32).toString('base64'),
  });
  const mongo = await MongoClient.connect(config.MONGODB_URL, { monitorCommands: true });
  const commands: string[] = [];
  mongo.on('commandStarted', (e) => {
    const command = e.command as Record<string, unknown>;
    commands.push(`${e.commandName} ${String(command[e.commandName])}`);
  });
  const redis = createRedis(config.REDIS_URL);
  const api = await composeApi({
    config,
    log: createLogger('bench', 'warn'),
    database: { client: mongo, db: mongo.db(config.MONGODB_DB), close: () => mongo.close() },
    redis,
    temporal: new TemporalClient({ connection: Connection.lazy({ address: '127.0.0.1:1' }) }),
    docker: createDockerClient(config.DOCKER_HOST),
    s3: createS3Client(config),
  });
  const server: Server = await new Promise((resolve) => {
    const s = buildApp(api).listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const org = await api.core.identity.bootstrap({ orgName: 'bench-auth', plan: 'enterprise' });
  const auth = { authorization: `Bearer ${org.token}` };

  try {
    const get = async (url: string, headers: Record<string, string> = {}) => {
      const res = await fetch(url, { headers });
      if (!res.ok) throw new Error(`${url} answered ${res.status}`);
      await res.arrayBuffer();
    };
    const timed = async (url: string, headers?: Record<string, string>) => {
      const ms: number[] = [];
      for (let i = 0; i < SEQUENTIAL; i++) {
        const t0 = performance.now();
        await get(url, headers);
        ms.push(performance.now() - t0);
      }
      return ms;
    };

    await get(`${base}/compat/providers`, auth);
    commands.length = 0;
    for (let i = 0; i < 20; i++) await get(`${base}/compat/providers`, auth);
    const perRequest = commands.length / 20;
    const kinds = [...new Set(commands)].join(', ') || 'none';

    // The auth path alone, as the middleware calls it.
    const authMs: number[] = [];
    for (let i = 0; i < SEQUENTIAL; i++) {
      const t0 = performance.now();
      await api.core.identity.authenticate(org.token);
      authMs.push(performance.now() - t0);
    }
    const health = await timed(`${base}/healthz`);
    const providers = await timed(`${base}/compat/providers`, auth);

    const bin = path.resolve(__dirname, '..', 'node_modules', '.bin', 'autocannon');
    const args = ['-j', '-c', String(CONNECTIONS), '-d', String(LOAD_S), '-H', `authorization=Bearer ${org.token}`];
    const load = JSON.parse((await run(bin, [...args, `${base}/compat/providers`], { maxBuffer: 1 << 24 })).stdout) as {
      requests: { average: number };
      latency: { p50: number; p99: number };
      non2xx: number;
      errors: number;
    };

    const fmt = (v: number) => `${v.toFixed(2)} ms`;
    console.log(
      `\nSlipway auth benchmark (${new Date().toISOString()}, ${os.cpus().length} cpus, node ${process.version})`,
    );
    console.log(`MongoDB commands per authenticated request: ${perRequest} (${kinds})`);
    console.log(
      `identity.authenticate  x${SEQUENTIAL}: median ${fmt(median(authMs))}, p99 ${fmt(percentile(authMs, 99))}`,
    );
    console.log(
      `GET /healthz           sequential x${SEQUENTIAL}: median ${fmt(median(health))}, p99 ${fmt(percentile(health, 99))}`,
    );
    console.log(
      `GET /compat/providers  sequential x${SEQUENTIAL}: median ${fmt(median(providers))}, p99 ${fmt(percentile(providers, 99))}`,
    );
    console.log(
      `GET /compat/providers  autocannon ${CONNECTIONS} connections ${LOAD_S} s: ${load.requests.average.toFixed(0)} req/s, ` +
        `latency p50 ${load.latency.p50} ms, p99 ${load.latency.p99} ms (non-2xx ${load.non2xx}, errors ${load.errors})`,
    );
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await mongo.close();
    await redis.quit();
    await stack.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
