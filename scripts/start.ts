import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { Listr } from 'listr2';

import { type PartResult, type PartsRunner, type Stack, StackError, startStack } from './stack';
import { repoRoot } from './stack/paths';
import { type Managed, startProcess, waitUntil } from './stack/process';

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
  await list.run().catch(() => undefined);
  return results;
};

async function main() {
  const dataDir = path.join(repoRoot, '.data');
  const began = Date.now();
  let stack: Stack | undefined;
  const apps: Managed[] = [];
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.log('\nslipway: stopping what this run started…');
    await Promise.all(apps.map((p) => p.stop()));
    await stack?.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

  try {
    stack = await startStack({ dataDir, ports: 'default', run: listrRunner });
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...stack.env,
      SECRETS_KEY: process.env.SECRETS_KEY ?? (await localSecretsKey(dataDir)),
    };
    const port = Number(env.PORT ?? 3000);
    const logs = (name: string) => path.join(dataDir, `${name}.log`);
    const node = (name: string, script: string) =>
      startProcess(name, process.execPath, ['--import', 'tsx', path.join(repoRoot, script)], {
        logFile: logs(name),
        env,
        cwd: repoRoot,
      });
    const worker = node('worker', 'worker/main.ts');
    const api = node('api', 'api/server.ts');
    apps.push(api, worker);
    const base = `http://127.0.0.1:${port}`;
    await waitUntil('the api', async () => (await fetch(`${base}/healthz`)).ok, { timeoutMs: 60_000, proc: api });
    await waitUntil('the worker', async () => (await fetch(`${base}/readyz`)).ok, { timeoutMs: 120_000, proc: worker });
    const urls: Record<string, string> = {
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
      '\nFirst token: npm run --silent cli -- admin bootstrap --org my-org --json\nCtrl-C stops everything this command started.',
    );
    const exited = await Promise.race(
      apps.map((p) => (p as Managed & { exited: Promise<number | null> }).exited.then(() => p.name)),
    );
    if (!stopping) {
      console.error(`slipway: the ${exited} process exited; see ${logs(exited)}`);
      await stopAll(1);
    }
  } catch (err) {
    console.error(
      `slipway: ${err instanceof StackError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    await stopAll(1);
  }
}

void main();

/** The vault key of this checkout's local stack: made once, kept beside the data it protects, readable by us only. */
async function localSecretsKey(dataDir: string): Promise<string> {
  const file = path.join(dataDir, 'secrets.key');
  try {
    return (await fs.readFile(file, 'utf8')).trim();
  } catch {
    const key = randomBytes(32).toString('base64');
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' }).catch(() => undefined);
    return (await fs.readFile(file, 'utf8')).trim();
  }
}
