import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Context } from '@temporalio/activity';

import { planBuild } from '@shared/build/detect';
import { assertSymlinksInside, SymlinkEscapeError } from '@shared/build/symlinks';

import { type BuildDeps, buildFailed, type BuildInput, type BuildResult } from './build-deps';
import { buildLog } from './build-log';
import { createSandboxedBuild } from './build-sandbox';
import { fetchSource } from './build-source';

export type { BuildDeps, BuildInput, BuildResult } from './build-deps';

/** Tag of a deployment's built image; removing the deployment removes every tag of this repository. */
export const builtImageRepository = (deploymentId: string) => `slipway/${deploymentId}`;

/**
 * Fetches a deployment's source (the uploaded zip from S3, or a shallow clone), extracts it safely, works out
 * how to build it and builds `slipway/<deploymentId>:<revision>` on the engine, streaming every line to the
 * build log. Heartbeats throughout: a destroy cancels it, which stops git or the engine's build at once.
 * Its scratch directory is removed whatever happens.
 */
export function createBuildActivities(deps: BuildDeps) {
  const { config } = deps;
  const workRoot = config.BUILD_WORK_DIR ?? path.join(os.tmpdir(), 'slipway-builds');
  const sandboxedBuild = createSandboxedBuild(deps);

  return {
    async buildSource(input: BuildInput): Promise<BuildResult> {
      const ctx = Context.current();
      const started = Date.now();
      const log = buildLog(deps.logs, input.deploymentId);
      const abort = new AbortController();
      const timeout = setTimeout(
        () => abort.abort(buildFailed(`the build took longer than ${config.BUILD_TIMEOUT_S} s and was stopped`)),
        config.BUILD_TIMEOUT_S * 1000,
      );
      const onCancel = () => abort.abort(new Error('cancelled'));
      ctx.cancellationSignal.addEventListener('abort', onCancel, { once: true });
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      const work = path.join(workRoot, `${input.deploymentId}-r${input.revision}-a${ctx.info.attempt}`);
      const tag = `${builtImageRepository(input.deploymentId)}:${input.revision}`;

      try {
        await fs.promises.rm(work, { recursive: true, force: true });
        await fs.promises.mkdir(work, { recursive: true });
        const { dir, commit, upload } = await fetchSource(deps, input, work, log.line, abort.signal);
        abort.signal.throwIfAborted();
        // A clone brings symlinks as committed, and a zip's links may chain out of the tree (`d/l -> ..`).
        await assertSymlinksInside(dir).catch((err: unknown) => {
          throw err instanceof SymlinkEscapeError ? buildFailed(err.message) : err;
        });

        const plan = await planBuild(dir, {
          port: input.port,
          ...(input.source.dockerfilePath ? { dockerfilePath: input.source.dockerfilePath } : {}),
          baseImages: {
            node: config.BUILD_BASE_IMAGE_NODE,
            static: config.BUILD_BASE_IMAGE_STATIC,
            python: config.BUILD_BASE_IMAGE_PYTHON,
          },
        }).catch((err: unknown) => {
          throw buildFailed(err instanceof Error ? err.message : String(err));
        });
        log.line(
          plan.kind === 'dockerfile'
            ? `building with the source's own ${plan.dockerfile}`
            : `detected a ${plan.kind} project; generated Dockerfile (${plan.steps.join(' → ')}):\n${plan.generated ?? ''}`,
        );

        await sandboxedBuild(dir, plan.dockerfile, tag, input, log.line, abort.signal);
        log.line(`built ${tag} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        return {
          image: tag,
          kind: plan.kind,
          ...(commit ? { commit } : {}),
          ...(upload ? { upload } : {}),
          durationMs: Date.now() - started,
        };
      } catch (err) {
        if (ctx.cancellationSignal.aborted) {
          log.line('build cancelled: the deployment was destroyed');
          throw ctx.cancellationSignal.reason;
        }
        const failure = abort.signal.aborted ? abort.signal.reason : err;
        const message = failure instanceof Error ? failure.message : String(failure);
        log.line(`build failed: ${message}`);
        // Our own verdicts are final; anything else (engine or S3 unreachable) may pass on a retry.
        throw failure;
      } finally {
        clearTimeout(timeout);
        clearInterval(beat);
        ctx.cancellationSignal.removeEventListener('abort', onCancel);
        // force: a directory already gone is no error; anything else leaves scratch space an operator should see.
        await fs.promises
          .rm(work, { recursive: true, force: true })
          .catch((err: unknown) =>
            ctx.log.warn('the build scratch directory was not removed', { path: work, error: String(err) }),
          );
        await log.close();
      }
    },
  };
}

export type BuildActivities = ReturnType<typeof createBuildActivities>;
