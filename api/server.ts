// The api's entry point (`npm start`, `npm run api`): one process, or with API_PROCESSES above one a primary that
// forks that many api processes sharing PORT (node:cluster hands each accepted connection to one of them in turn).
// Every api process is stateless, so they may as well run on several machines behind a load balancer: what a
// process keeps to itself is listed in README.md, "Scaling out".
import cluster from 'node:cluster';
import os from 'node:os';

import { config, ConfigError } from '@shared/config';

import { runPrimary } from './cluster';

function fail(err: unknown): never {
  console.error(
    `slipway api: ${err instanceof ConfigError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
  );
  process.exit(1);
}

async function main() {
  const cfg = config();
  const count = cfg.API_PROCESSES === 'auto' ? os.availableParallelism() : cfg.API_PROCESSES;
  // The primary only forks and watches: it never loads the app, so it costs a bare node process.
  if (cluster.isPrimary && count > 1) return runPrimary(count, cfg.LOG_LEVEL);
  // Loaded here, not above, so that a primary does not hold the app's modules.
  const { serveApi } = await import('./serve.js');
  await serveApi();
}

main().catch(fail);
