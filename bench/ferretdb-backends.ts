// The embedded FerretDB on SQLite against FerretDB on PostgreSQL, paired: each round starts both in turn (the order
// alternating) on the same machine, and runs the same work on each. Prints figures; never asserts.
//   node --import tsx bench/ferretdb-backends.ts            the database alone: start-up, a deployment's writes, memory
//   node --import tsx bench/ferretdb-backends.ts --service  also the whole service: status reads and 202s over HTTP
// BENCH_ROUNDS (3) rounds; BENCH_PHASE_S (10) s for each timed phase.
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import autocannon from 'autocannon';

import { startStack } from '@scripts/stack';
import { mongodb } from '@scripts/stack/parts';
import type { FerretdbBackend } from '@scripts/stack/postgres';
import { connectMongo } from '@shared/db/mongo';
import { createLogStore } from '@shared/deployments/logs-store';
import { createDeploymentStore } from '@shared/deployments/store';
import type { DeploymentRecord } from '@shared/deployments/types';
import { createDockerClient } from '@shared/engine/docker-client';
import { buildFixtureImage } from '@test/helpers/images';

import { median, percentile, startService, until } from './harness';

const run = promisify(execFile);
const ROUNDS = Number(process.env.BENCH_ROUNDS) || 3;
const PHASE_MS = (Number(process.env.BENCH_PHASE_S) || 10) * 1000;
const BACKENDS: FerretdbBackend[] = ['sqlite', 'postgresql'];

/** Resident and proportional memory (MiB) of a process and its children (PostgreSQL forks one per connection). */
async function memory(pid: number): Promise<{ rss: number; pss: number }> {
  const children = (await run('pgrep', ['-P', String(pid)]).catch(() => ({ stdout: '' }))).stdout
    .split('\n')
    .filter(Boolean)
    .map(Number);
  let rss = 0;
  let pss = 0;
  for (const p of [pid, ...children]) {
    const rollup = await fs.readFile(`/proc/${p}/smaps_rollup`, 'utf8').catch(() => '');
    rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
  }
  return { rss: rss / 1024, pss: pss / 1024 };
}

function record(orgId: string): DeploymentRecord {
  const now = new Date();
  return {
    _id: randomUUID(),
    orgId,
    createdBy: 'bench',
    origin: 'compat',
    name: `bench-${randomUUID().slice(0, 8)}`,
    provider: 'engine_local',
    source: { type: 'image', image: 'slipway-fixture/hello:latest' },
    port: 8080,
    envNames: ['A', 'B'],
    revision: 1,
    status: 'queued',
    version: 0,
    events: [{ status: 'queued', message: 'queued', at: now }],
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * One deployment's life as the database sees it: the insert, the workflow's status writes (each a conditional
 * update plus the destroy-intent look-up), a batch of build output and a read by id.
 */
async function oneDeployment(stores: {
  deployments: ReturnType<typeof createDeploymentStore>;
  logs: ReturnType<typeof createLogStore>;
}): Promise<void> {
  const r = record('bench-org');
  await stores.deployments.insert(r);
  await stores.deployments.recordStatus({ deploymentId: r._id, version: 1, status: 'building', message: 'building' });
  await stores.logs.append(
    r._id,
    'build',
    Array.from({ length: 20 }, (_, i) => `step ${i}: RUN npm ci --omit=dev`),
  );
  await stores.deployments.recordStatus({ deploymentId: r._id, version: 2, status: 'deploying', message: 'deploying' });
  await stores.deployments.recordStatus({
    deploymentId: r._id,
    version: 3,
    status: 'running',
    message: 'running',
    url: `http://${r.name}.localhost`,
    container: { id: randomUUID(), name: r.name, hostPort: 40000 },
    revision: 1,
    replicas: 1,
  });
  const found = await stores.deployments.get(r.orgId, r._id);
  if (found?.status !== 'running') throw new Error(`read back ${found?.status ?? 'nothing'} for ${r._id}`);
}

/** `clients` loops running `oneDeployment` for the phase; deployments per second and each one's latency. */
async function workload(url: string, clients: number) {
  const database = await connectMongo(url, 'slipway');
  const stores = { deployments: createDeploymentStore(database.db), logs: createLogStore(database.db) };
  await stores.deployments.ensureIndexes();
  await stores.logs.ensureIndexes();
  const latencies: number[] = [];
  let errors = 0;
  const end = Date.now() + PHASE_MS;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (Date.now() < end) {
        const s = performance.now();
        await oneDeployment(stores).then(
          () => latencies.push(performance.now() - s),
          (err: unknown) => {
            errors++;
            if (errors <= 3) console.error(err);
          },
        );
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await database.close();
  return { perS: latencies.length / seconds, p50: median(latencies), p99: percentile(latencies, 99), errors };
}

type Row = Record<string, number>;
const results: Record<FerretdbBackend, Row[]> = { sqlite: [], postgresql: [] };

async function databaseRound(backend: FerretdbBackend): Promise<Row> {
  process.env.FERRETDB_BACKEND = backend;
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `slipway-bench-${backend}-`));
  const start = async () => {
    const t0 = performance.now();
    const started = await startStack({ dataDir, ports: 'free', headless: true, parts: [mongodb], run: quiet });
    return { stack: started, ms: performance.now() - t0 };
  };
  // The first start makes the data (initdb for PostgreSQL); every later `npm start` finds it there.
  const first = await start();
  await first.stack.stop();
  const { stack, ms: startMs } = await start();
  try {
    const url = stack.env.MONGODB_URL!;
    const one = await workload(url, 1);
    const twenty = await workload(url, 20);
    const mem = (await Promise.all(stack.started.map((p) => memory(p.pid)))).reduce(
      (a, m) => ({ rss: a.rss + m.rss, pss: a.pss + m.pss }),
      { rss: 0, pss: 0 },
    );
    return {
      firstStartMs: first.ms,
      startMs,
      perS1: one.perS,
      p50_1: one.p50,
      p99_1: one.p99,
      perS20: twenty.perS,
      p50_20: twenty.p50,
      p99_20: twenty.p99,
      errors: one.errors + twenty.errors,
      rss: mem.rss,
      pss: mem.pss,
    };
  } finally {
    await stack.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

const quiet: Parameters<typeof startStack>[0]['run'] = async (jobs) =>
  Promise.allSettled(jobs.map((j) => j.start(() => undefined)));

/** The whole service on one backend: a status read at 20 connections, then 202s of deploys at 20 clients. */
async function serviceRound(backend: FerretdbBackend, image: string): Promise<Row> {
  process.env.FERRETDB_BACKEND = backend;
  const t0 = performance.now();
  const svc = await startService();
  const startMs = performance.now() - t0;
  const auth = { authorization: `Bearer ${svc.org.token}`, 'content-type': 'application/json' };
  const call = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`${svc.base}${p}`, {
      method,
      headers: auth,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await r.text().then((t) => (t ? JSON.parse(t) : {}))) as Record<string, unknown>;
  };
  try {
    const one = await call('POST', '/compat/deploy', { image, name: 'reads' });
    const id = String(one.deploymentId);
    await until(async () => ((await call('GET', `/compat/deployments/${id}`)).status === 'running' ? true : undefined));
    const reads = await autocannon({
      url: `${svc.base}/compat/deployments/${id}`,
      connections: 20,
      duration: PHASE_MS / 1000,
      headers: auth,
    });
    let seq = 0;
    const accept = await autocannon({
      url: `${svc.base}/compat/deploy`,
      method: 'POST',
      connections: 20,
      amount: 60,
      headers: auth,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ image, name: `load-${seq++}` }) }) }],
    });
    for (;;) {
      const page = (await call('GET', '/compat/deployments?limit=100')).deployments as { id: string }[];
      if (!page.length) break;
      await Promise.all(page.map((d) => call('DELETE', `/compat/deployments/${d.id}`)));
    }
    const docker = createDockerClient(process.env.DOCKER_HOST);
    await until(async () => {
      const left = await docker.listContainers({
        all: true,
        filters: { label: [`dev.slipway.org-id=${svc.org.orgId}`] },
      });
      return left.length === 0 ? true : undefined;
    }, 180_000);
    return {
      serviceStartMs: startMs,
      readsPerS: reads.requests.average,
      readsP99: reads.latency.p99,
      readsNon2xx: reads.non2xx,
      acceptP50: accept.latency.p50,
      acceptP99: accept.latency.p99,
      acceptNon2xx: accept.non2xx,
    };
  } finally {
    await svc.stop();
  }
}

async function main() {
  const service = process.argv.includes('--service');
  const image = service ? await buildFixtureImage(createDockerClient(process.env.DOCKER_HOST), 'hello') : '';
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? BACKENDS : [...BACKENDS].reverse();
    for (const backend of order) {
      const row = await databaseRound(backend);
      // A service that did not come up (a loaded machine) costs this round's service figures, not the run.
      if (service) {
        Object.assign(
          row,
          await serviceRound(backend, image).catch((err: unknown) => {
            console.error(`round ${r + 1} ${backend}: the service round failed:`, err);
            return {};
          }),
        );
      }
      results[backend].push(row);
      console.error(
        `round ${r + 1} ${backend}: ${JSON.stringify(row, (_k, v: unknown) => (typeof v === 'number' ? fmt(v) : v))}`,
      );
    }
  }
  console.log(
    `\nFerretDB backends, ${ROUNDS} paired rounds, ${PHASE_MS / 1000} s phases (${new Date().toISOString()}, ${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(1)})`,
  );
  const keys = [...new Set(BACKENDS.flatMap((b) => results[b].flatMap((row) => Object.keys(row))))];
  console.log(
    ['figure (median of rounds)'.padEnd(28), ...BACKENDS.map((b) => b.padStart(12)), 'pg / sqlite'.padStart(12)].join(
      '',
    ),
  );
  for (const k of keys) {
    const [s, p] = BACKENDS.map((b) => median(results[b].flatMap((row) => (k in row ? [row[k]!] : []))));
    console.log(
      [k.padEnd(28), fmt(s!).padStart(12), fmt(p!).padStart(12), (s ? (p! / s).toFixed(2) : '-').padStart(12)].join(''),
    );
  }
}

const fmt = (v: unknown): string =>
  typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(1)) : v === undefined ? '-' : String(v);

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
