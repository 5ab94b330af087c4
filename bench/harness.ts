// Starts the whole service as `npm start` does (stack + api + worker processes), on free ports with
// throwaway data, with limits raised so a benchmark measures the service, not its rate limiter.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { Agent, fetch as undiciFetch } from 'undici';

import { startStack } from '@scripts/stack';
import { SERVICE_NODE_FLAGS } from '@scripts/stack/node-flags';
import { freePort, type Managed, startProcess, waitUntil } from '@scripts/stack/process';
import { connectMongo } from '@shared/db/mongo';
import { createIdentityService } from '@shared/identity/service';
import { createIdentityStore } from '@shared/identity/store';
import { localhostLookup } from '@shared/localhost-lookup';

const root = path.resolve(__dirname, '..');

/**
 * `apiProcesses` starts one api per entry, each on its own port against the same stack and worker, with that many
 * processes (API_PROCESSES): `[1, 2]` compares one process with two on the same data. `base` is the first one's.
 */
export async function startService(extraEnv: Record<string, string> = {}, opts: { apiProcesses?: number[] } = {}) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-bench-'));
  const stack = await startStack({
    dataDir,
    ports: 'free',
    headless: true,
    run: async (jobs) => Promise.allSettled(jobs.map((j) => j.start(() => undefined))),
  });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...stack.env,
    PORT: String(port),
    LOG_LEVEL: 'warn',
    TEMPORAL_TASK_QUEUE: `bench-${process.pid}`,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    RATE_LIMIT_COMPAT_READS_PER_MIN: '100000000',
    RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000000',
    RATE_LIMIT_PLATFORM_PER_15MIN: '100000000',
    // Benches deploy far more than 10 in 15 minutes from one user.
    RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000000',
    QUOTA_MULTIPLIER: '1000',
    // As npm start does (a key of its own per data directory): env values are sealed, never stored in clear.
    SECRETS_KEY: process.env.SECRETS_KEY ?? randomBytes(32).toString('base64'),
    ...extraEnv,
  };
  const apps: Managed[] = [];
  const node = (name: string, script: string, own: NodeJS.ProcessEnv = {}) =>
    startProcess(name, process.execPath, ['--import', 'tsx', ...SERVICE_NODE_FLAGS, path.join(root, script)], {
      logFile: path.join(dataDir, `${name}.log`),
      env: { ...env, ...own },
      cwd: root,
    });
  const worker = node('worker', 'worker/main.ts');
  apps.push(worker);
  const apis: { base: string; proc: ReturnType<typeof node>; processes: number }[] = [];
  for (const [i, processes] of (opts.apiProcesses ?? [1]).entries()) {
    const own = i === 0 ? port : await freePort();
    const proc = node(i === 0 ? 'api' : `api-${i}`, 'api/server.ts', {
      PORT: String(own),
      API_PROCESSES: String(processes),
    });
    apps.push(proc);
    apis.push({ base: `http://127.0.0.1:${own}`, proc, processes });
  }
  const api = apis[0]!.proc;
  const base = apis[0]!.base;
  const stop = async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await stack.stop();
    // The api and worker logs are the only account of an error a bench met; keep them when asked.
    if (process.env.SLIPWAY_BENCH_KEEP_DATA) console.error(`bench data and logs kept in ${dataDir}`);
    else await fs.rm(dataDir, { recursive: true, force: true });
  };
  try {
    for (const a of apis)
      await waitUntil('the api', async () => (await fetch(`${a.base}/healthz`)).ok, {
        timeoutMs: 60_000,
        proc: a.proc,
      });
    await waitUntil('the worker', async () => (await fetch(`${base}/readyz`)).ok, { timeoutMs: 120_000, proc: worker });
  } catch (err) {
    await stop();
    throw err;
  }
  const database = await connectMongo(stack.env.MONGODB_URL ?? process.env.MONGODB_URL!, 'slipway');
  const identity = createIdentityService({ store: createIdentityStore(database.db) });
  const org = await identity.bootstrap({ orgName: 'bench', plan: 'enterprise' });
  await database.close();
  return {
    base,
    env,
    org,
    pids: { api: api.pid, worker: worker.pid },
    apis: apis.map((a) => ({ base: a.base, pid: a.proc.pid, processes: a.processes })),
    stop,
  };
}

const run = promisify(execFile);

/** Resident memory of one process, in MB (`ps`), or undefined once it is gone. */
export async function rssMb(pid: number): Promise<number | undefined> {
  const out = await run('ps', ['-o', 'rss=', '-p', String(pid)]).catch(() => undefined);
  const kb = Number(out?.stdout.trim());
  return out && Number.isFinite(kb) && kb > 0 ? kb / 1024 : undefined;
}

/**
 * Resident memory of an api started with `apiProcesses`: one figure for a single process; for a cluster, its
 * primary and each api process it forked (`ps --ppid`), since the goal is per process.
 */
export async function apiRssMb(pid: number): Promise<{ pid: number; role: 'api' | 'primary'; mb: number }[]> {
  const children = await run('ps', ['-o', 'pid=,rss=,comm=', '--ppid', String(pid)]).catch(() => ({ stdout: '' }));
  // Only node children are api processes (tsx's esbuild service is a child of every process run through tsx).
  const forked = children.stdout
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, , comm]) => comm === 'node')
    .map(([p, kb]) => ({ pid: Number(p), role: 'api' as const, mb: Number(kb) / 1024 }));
  const own = (await rssMb(pid)) ?? 0;
  return forked.length ? [{ pid, role: 'primary', mb: own }, ...forked] : [{ pid, role: 'api', mb: own }];
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export const median = (values: number[]) => percentile(values, 50);

/** Polls `fn` until it returns a value; errors count as "not yet". */
export async function until<T>(fn: () => Promise<T | undefined>, timeoutMs = 60_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * True once `url` answers 2xx. Each attempt is bounded: docker-proxy accepts a connection on a published port
 * before the app listens, and such a request can hang with no answer at all.
 */
export const answers = (url: string) =>
  undiciFetch(url, { signal: AbortSignal.timeout(2_000), dispatcher: loopbackAgent }).then((r) =>
    r.ok ? true : undefined,
  );

/** Deployments' `*.localhost` URLs reach the router on loopback whatever the host's resolver says. */
const loopbackAgent = new Agent({ connect: { lookup: localhostLookup } });

/**
 * The baseline: `docker run` of `image` with port 8080 published on loopback, until it answers. Returns the
 * container's id for the caller to remove once the clock has stopped.
 */
export async function bareRun(image: string): Promise<string> {
  const cid = (await run('docker', ['run', '-d', '-p', '127.0.0.1::8080', image])).stdout.trim();
  const hostPort = (await run('docker', ['port', cid, '8080/tcp'])).stdout.trim().split('\n')[0]!.split(':').pop();
  await until(async () => answers(`http://127.0.0.1:${hostPort}/`));
  return cid;
}
