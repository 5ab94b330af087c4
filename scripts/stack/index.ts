import fs from 'node:fs/promises';

import { ALL_PARTS, type Part, type PartContext, type PartResult } from './parts';
import type { Managed } from './process';
import { StackError } from './stack-error';

export type { PartResult } from './parts';
export { StackError } from './stack-error';

export interface Stack {
  /** Variables that point the api and worker at the running parts. */
  env: Record<string, string>;
  urls: Record<string, string>;
  started: Managed[];
  stop(): Promise<void>;
}

export interface PartJob {
  name: string;
  start(progress: (line: string) => void): Promise<PartResult>;
}

/** Runs the parts' starts concurrently and settles each; `npm start` swaps this for a progress display. */
export type PartsRunner = (jobs: PartJob[]) => Promise<PromiseSettledResult<PartResult>[]>;

const plainRunner: PartsRunner = (jobs) =>
  Promise.allSettled(jobs.map((job) => job.start((line) => console.log(`[${job.name}] ${line}`))));

/**
 * Starts every part whose variable is unset, concurrently. The first part to fail stops the others' builds and
 * waits (a port taken must not wait out a ten-minute build elsewhere), and whatever did start is stopped again
 * before that first error propagates: a failed start leaves nothing running.
 */
export async function startStack(opts: {
  dataDir: string;
  ports: PartContext['ports'];
  headless?: boolean;
  parts?: Part[];
  run?: PartsRunner;
  /** Ctrl-C: builds in progress stop, and what did start is stopped again before this rejects. */
  signal?: AbortSignal;
}): Promise<Stack> {
  await fs.mkdir(opts.dataDir, { recursive: true });
  const run = opts.run ?? plainRunner;
  const failFast = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, failFast.signal]) : failFast.signal;
  let firstFailure: { reason: unknown } | undefined;
  const results = await run(
    (opts.parts ?? ALL_PARTS).map((part) => ({
      name: part.name,
      start: (progress: (line: string) => void) =>
        part
          .start({ dataDir: opts.dataDir, ports: opts.ports, headless: opts.headless ?? false, progress, signal })
          .catch((reason: unknown) => {
            firstFailure ??= { reason };
            failFast.abort();
            throw reason;
          }),
    })),
  );
  const ok = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const started = ok.flatMap((r) => r.started);
  const stop = async () => {
    // Reverse order of start; each stop only signals the process this run spawned.
    await Promise.all(started.reverse().map((p) => p.stop()));
  };
  if (firstFailure || opts.signal?.aborted) {
    await stop();
    throw firstFailure?.reason ?? new StackError('start-up was interrupted');
  }
  return {
    env: Object.assign({}, ...ok.map((r) => r.env)) as Record<string, string>,
    urls: Object.assign({}, ...ok.map((r) => r.urls ?? {})) as Record<string, string>,
    started,
    stop,
  };
}
