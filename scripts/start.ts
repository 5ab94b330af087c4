import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { Listr } from 'listr2';

import { createDockerClient } from '@shared/engine/docker-client';
import { ignore, isAbsent } from '@shared/ignore';

import { type PartResult, type PartsRunner, type Stack, StackError, startStack } from './stack';
import { baseImagesPart } from './stack/base-images';
import { SERVICE_NODE_FLAGS } from './stack/node-flags';
import { repoRoot } from './stack/paths';
import { configuredPort, ensurePortFree } from './stack/ports';
import { waitUntil } from './stack/process';
import { supervise, type Supervisor } from './stack/supervisor';

/** One line per part, updated while tools build and services start. */
const listrRunner: PartsRunner = async (jobs) => {
  const results: PromiseSettledResult<PartResult>[] = [];
  const list = new Listr(
    jobs.map((job, i) => ({
      title: job.name,
      task: async (_ctx: unknown, task: { output: string; title: string }) => {
        try {
          const value = await job.start((line) => (task.output = line));
          results[i] = { status: 'fulfilled', value };
          task.title = `${job.name}: ${value.external ? 'using the configured server' : 'running'}`;
        } catch (reason) {
          results[i] = { status: 'rejected', reason };
          throw reason;
        }
      },
    })),
    { concurrent: true, exitOnError: false, rendererOptions: { collapseErrors: false } },
  );
  await list.run().catch(ignore("each part's failure is in results, which the caller reports"));
  return results;
};

async function main() {
  const dataDir = path.join(repoRoot, '.data');
  const began = Date.now();
  // Ctrl-C (or SIGTERM) aborts this: a tool build stops and its scratch copy goes, a wait gives up, and the
  // `finally` below stops everything this run started, and nothing else.
  const interrupted = new AbortController();
  const onSignal = () => {
    if (interrupted.signal.aborted) return;
    console.log('\nslipway: stopping what this run started…');
    interrupted.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let stack: Stack | undefined;
  let apps: Supervisor | undefined;
  let code = 0;
  try {
    const host = process.env.HOST || '127.0.0.1';
    const port = configuredPort('PORT', 3000);
    // Before anything is built: minutes of tool builds must not end on "port 3000 is taken".
    await ensurePortFree({ port, part: 'the api', variable: 'PORT' }, host);
    stack = await startStack({ dataDir, ports: 'default', run: listrRunner, signal: interrupted.signal });
    // Once the engine answers: Slipway's base images (minutes the first time, a second once they exist).
    const engine = stack.env.DOCKER_HOST ?? process.env.DOCKER_HOST;
    const bases = await startStack({
      dataDir,
      ports: 'default',
      run: listrRunner,
      signal: interrupted.signal,
      parts: [baseImagesPart(() => createDockerClient(engine))],
    });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...stack.env,
      ...bases.env,
      SECRETS_KEY: process.env.SECRETS_KEY ?? (await localSecretsKey(dataDir)),
    };
    // Checked again: a part's start-up took minutes, and another program may have taken it meanwhile.
    await ensurePortFree({ port, part: 'the api', variable: 'PORT' }, host);
    const logs = (name: string) => path.join(dataDir, `${name}.log`);
    const node = (name: string, script: string) => ({
      name,
      command: process.execPath,
      args: ['--import', 'tsx', ...SERVICE_NODE_FLAGS, path.join(repoRoot, script)],
      logFile: logs(name),
      env,
      cwd: repoRoot,
    });
    let ready = false;
    apps = supervise([node('worker', 'worker/main.ts'), node('api', 'api/server.ts')], {
      // Until the stack was ready once, a crash is a start-up failure (a bad setting would crash forever).
      shouldRestart: () => ready,
      report: (line) => console.error(line),
    });
    const sup = apps;
    const crashOf = (name: string) => ({
      exited: sup.nextCrash(name).then((c) => c.code),
      logFile: logs(name),
    });
    const base = `http://127.0.0.1:${port}`;
    const signal = interrupted.signal;
    await waitUntil('the api', async () => (await fetch(`${base}/healthz`)).ok, {
      timeoutMs: 60_000,
      proc: crashOf('api'),
      signal,
    });
    await waitUntil('the worker', async () => (await fetch(`${base}/readyz`)).ok, {
      timeoutMs: 120_000,
      proc: crashOf('worker'),
      signal,
    });
    ready = true;
    const urls: Record<string, string> = {
      'Web console': `${base}/`,
      'Compatibility API': `${base}/compat`,
      'Platform API': `${base}/platform`,
      OpenAPI: `${base}/openapi.json`,
      'API reference': `${base}/docs`,
      Readiness: `${base}/readyz`,
      ...stack.urls,
    };
    console.log(
      `\nSlipway is ready in ${((Date.now() - began) / 1000).toFixed(1)} s (data in ${dataDir}, logs in ${dataDir}/*.log)`,
    );
    for (const [name, url] of Object.entries(urls)) console.log(`  ${name.padEnd(18)} ${url}`);
    console.log(
      '\nFirst token (sign in to the web console with it): npm run --silent cli -- admin bootstrap --org my-org --json\n' +
        'A crashed api or worker is restarted. Ctrl-C stops everything this command started.',
    );
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  } catch (err) {
    if (!interrupted.signal.aborted) {
      console.error(
        `slipway: ${err instanceof StackError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
      );
      code = 1;
    }
  } finally {
    await apps?.stop();
    await stack?.stop();
  }
  process.exit(code);
}

void main();

/** The vault key of this checkout's local stack: made once, kept beside the data it protects, readable by us only. */
async function localSecretsKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'secrets.key');
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch (err) {
    if (!isAbsent(err)) throw err;
    const key = randomBytes(32).toString('base64');
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' }).catch((e: NodeJS.ErrnoException) => {
      // Another start made it first: that one is the key.
      if (e.code !== 'EEXIST') throw e;
    });
    return (await fs.readFile(file, 'utf8')).trim();
  }
}
