import cluster, { type Worker } from 'node:cluster';

import { createLogger } from '@shared/logger';

/** After a crash, how long before its replacement starts: a process that dies at once must not spin the machine. */
const RESTART_DELAY_MS = 1_000;
/** How long the api processes get to finish their requests after SIGINT/SIGTERM before the primary leaves anyway. */
const STOP_GRACE_MS = 10_000;

/**
 * The primary of `count` api processes on one port. A process that dies before it ever listened is a start-up
 * failure (a bad setting, a service that does not answer): the primary stops them all and exits with its code, as a
 * single api process would, so whoever started it sees it. One that dies after it listened is replaced. SIGINT and
 * SIGTERM are passed on, and the primary exits once every process has. If the primary itself is killed, its
 * processes leave too (node:cluster ends a worker whose channel to the primary closes).
 */
export function runPrimary(count: number, logLevel: string): void {
  const log = createLogger('api', logLevel);
  const listened = new WeakSet<Worker>();
  // Counted here rather than read from cluster.workers, which may still list a process that exited until its
  // channel to the primary has closed too.
  const live = new Set<Worker>();
  let stopping = false;
  let exitCode = 0;

  const fork = () => {
    const worker = cluster.fork();
    live.add(worker);
    worker.once('listening', () => listened.add(worker));
  };
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    for (const w of live) w.process.kill('SIGTERM');
    setTimeout(() => process.exit(exitCode), STOP_GRACE_MS).unref();
    if (live.size === 0) process.exit(exitCode);
  };

  cluster.on('exit', (worker, code, signal) => {
    live.delete(worker);
    if (stopping) {
      if (live.size === 0) process.exit(exitCode);
      return;
    }
    if (!listened.has(worker)) {
      log.error({ pid: worker.process.pid, code, signal }, 'an api process stopped before it listened; stopping all');
      stop(code || 1);
      return;
    }
    log.error({ pid: worker.process.pid, code, signal }, 'an api process stopped; starting another');
    setTimeout(() => {
      if (!stopping) fork();
    }, RESTART_DELAY_MS);
  });
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  for (let i = 0; i < count; i++) fork();
  log.info({ processes: count, pid: process.pid }, 'api primary started');
}
