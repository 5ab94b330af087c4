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
import { freePort, type Managed, startProcess, waitUntil } from '@scripts/stack/process';
import { connectMongo } from '@shared/db/mongo';
import { createIdentityService } from '@shared/identity/service';
import { createIdentityStore } from '@shared/identity/store';
import { localhostLookup } from '@shared/localhost-lookup';

const root = path.resolve(__dirname, '..');

export async function startService(extraEnv: Record<string, string> = {}) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-bench-'));
  const stack = await startStack({
    dataDir,
    ports: 'free',
    headless: true,
    run: async (jobs) => Promise.allSettled(jobs.map((j) => j.start(() => undefined))),
  });
  const port = await freePort();
  const env = {
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
  const node = (name: string, script: string) =>
    startProcess(name, process.execPath, ['--import', 'tsx', path.join(root, script)], {
      logFile: path.join(dataDir, `${name}.log`),
      env,
      cwd: root,
    });
  const worker = node('worker', 'worker/main.ts');
  const api = node('api', 'api/server.ts');
  apps.push(api, worker);
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await Promise.all(apps.map((a) => a.stop()));
    await stack.stop();
    // The api and worker logs are the only account of an error a bench met; keep them when asked.
    if (process.env.SLIPWAY_BENCH_KEEP_DATA) console.error(`bench data and logs kept in ${dataDir}`);
    else await fs.rm(dataDir, { recursive: true, force: true });
  };
  try {
    await waitUntil('the api', async () => (await fetch(`${base}/healthz`)).ok, { timeoutMs: 60_000, proc: api });
    await waitUntil('the worker', async () => (await fetch(`${base}/readyz`)).ok, { timeoutMs: 120_000, proc: worker });
  } catch (err) {
    await stop();
    throw err;
  }
  const database = await connectMongo(stack.env.MONGODB_URL ?? process.env.MONGODB_URL!, 'slipway');
  const identity = createIdentityService({ store: createIdentityStore(database.db) });
  const org = await identity.bootstrap({ orgName: 'bench', plan: 'enterprise' });
  await database.close();
  return { base, env, org, pids: { api: api.pid, worker: worker.pid }, stop };
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

const run = promisify(execFile);

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
