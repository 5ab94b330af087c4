import { stripVTControlCharacters } from 'node:util';

import type Docker from 'dockerode';

import type { BuildCgroup } from './build-cgroup';
import { buildContext } from './context';
import { explainBuildFailure } from './explain';
import { lineAssembler } from './lines';
import { sourcePackageNames } from './package-names';
import { type BuildLimits, buildResourceOptions, outOfMemory } from './sandbox';

/** A build the engine ran and that failed by the source's doing (a step's exit code, out of memory). */
export class EngineBuildError extends Error {
  override name = 'EngineBuildError';
}

interface BuildMessage {
  stream?: string;
  error?: string;
  errorDetail?: { message?: string; code?: number };
}

export interface EngineBuildOptions {
  dir: string;
  /** Relative to `dir`; the engine reads it from the context. */
  dockerfile: string;
  tag: string;
  /** Network RUN steps join (the build network). */
  network: string;
  limits: BuildLimits;
  /** Named in the out-of-memory message. */
  plan: string;
  /** The build's own cgroup (its process limit), when the engine host allows one. */
  cgroup?: Pick<BuildCgroup, 'parent' | 'limitHit'>;
  log: (line: string) => void;
  signal: AbortSignal;
}

/**
 * `docker build` through the engine API (classic builder) in the build sandbox: the build network, the plan's
 * memory and CPU. Names the step that failed as the engine reports it; a step killed for memory says so.
 */
export async function engineBuild(docker: Docker, opts: EngineBuildOptions): Promise<void> {
  const stream = await docker.buildImage(await buildContext(opts.dir, opts.dockerfile), {
    t: opts.tag,
    dockerfile: opts.dockerfile,
    rm: true,
    forcerm: true,
    networkmode: opts.network,
    ...buildResourceOptions(opts.limits),
    ...(opts.cgroup ? { cgroupparent: opts.cgroup.parent } : {}),
    abortSignal: opts.signal,
  });
  let step = '';
  // What the current step printed: the failure's explanation reads it (the raw text stays in the log only).
  let output = '';
  let failure: string | undefined;
  const lines = lineAssembler(opts.log);
  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (err) => (err ? reject(err instanceof Error ? err : new Error(String(err))) : resolve()),
      (msg: BuildMessage) => {
        if (msg.stream) {
          // npm and pip colour their output even without a terminal; the log is read as plain text (often by an agent).
          const text = stripVTControlCharacters(msg.stream);
          const m = /^Step \d+\/\d+ : (.*)/m.exec(text);
          if (m?.[1]) {
            step = m[1].trim();
            output = '';
          } else output = `${output}${text}`.slice(-65_536);
          lines.push(text);
        }
        if (msg.error) {
          failure = msg.errorDetail?.message ?? msg.error;
          lines.end();
          opts.log(failure);
        }
      },
    );
  })
    .catch((err: unknown) => {
      if (opts.signal.aborted) throw opts.signal.reason;
      throw err;
    })
    .finally(() => lines.end());
  if (opts.signal.aborted) throw opts.signal.reason;
  if (!failure) return;
  if (outOfMemory(failure)) {
    const what = `the build step ran out of memory (limit ${opts.limits.memoryMb} MB on the ${opts.plan} plan)`;
    throw new EngineBuildError(step ? `${what} at "${step}"` : what);
  }
  if (await opts.cgroup?.limitHit()) {
    const what = `the build step reached the process limit (${opts.limits.pids} processes on the ${opts.plan} plan)`;
    throw new EngineBuildError(step ? `${what} at "${step}"` : what);
  }
  const knownNames = await sourcePackageNames(opts.dir);
  throw new EngineBuildError(explainBuildFailure(step, `${output}\n${failure}`, { knownNames }));
}
