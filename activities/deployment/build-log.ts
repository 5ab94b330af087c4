import { Context } from '@temporalio/activity';

import type { LogStore } from '@shared/deployments/logs-store';

/**
 * Batches build output into the deployment's log (stream `build`), in order, a few writes a second at most. A batch
 * MongoDB did not take is lost to the log, never to the build: the worker's log says how many lines went missing.
 */
export function buildLog(logs: Pick<LogStore, 'append'>, deploymentId: string) {
  const worker = Context.current().log;
  let pending: string[] = [];
  let writing = Promise.resolve();
  const flush = () => {
    if (pending.length === 0) return writing;
    const batch = pending;
    pending = [];
    writing = writing
      .then(() => logs.append(deploymentId, 'build', batch))
      .catch((err: unknown) =>
        worker.warn('build log lines were not stored', { deploymentId, lines: batch.length, error: String(err) }),
      );
    return writing;
  };
  const timer = setInterval(() => void flush(), 300);
  return {
    line(text: string) {
      for (const l of text.split('\n')) if (l.trim()) pending.push(l.replace(/\s+$/, '').slice(0, 4000));
    },
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
