import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type Docker from 'dockerode';

import { type BuildCgroup, createBuildCgroup } from '../../shared/build/build-cgroup';
import { planBuild } from '../../shared/build/detect';
import { engineBuild, EngineBuildError } from '../../shared/build/docker-build';
import { DockerfileRefusedError, inspectDockerfile } from '../../shared/build/dockerfile-policy';
import { extractZip, soleTopLevelDir } from '../../shared/build/extract';
import { cloneCheckout, cloneRepository } from '../../shared/build/git';
import { assertImagesUsable } from '../../shared/build/image-access';
import { labelledDockerfile } from '../../shared/build/labelled-dockerfile';
import { createOrgBuildLeases } from '../../shared/build/org-leases';
import { type BuildLimits, createBuildSlots, ensureBuildNetwork } from '../../shared/build/sandbox';
import { assertSymlinksInside, SymlinkEscapeError } from '../../shared/build/symlinks';
import type { Config } from '../../shared/config';
import { LABELS } from '../../shared/constants';
import type { LogStore } from '../../shared/deployments/logs-store';
import type { DeploymentSource } from '../../shared/deployments/types';
import { PLAN_POLICIES } from '../../shared/plans';
import type { Redis } from '../../shared/redis';
import { GitSecretRefusedError, type Vault } from '../../shared/secrets/vault';
import type { UploadStore } from '../../shared/uploads/store';
import { ensureHostIsolation } from '../providers/host-firewall';

export interface BuildDeps {
  docker: Docker;
  /** Bounds one organisation's builds across every worker; without it the bound is per worker. */
  redis?: Redis;
  /** Label value naming this Slipway instance: its reconciler removes only images carrying it. */
  instance: string;
  s3: S3Client;
  uploads: Pick<UploadStore, 'get'>;
  vault: Pick<Vault, 'revealForGit'>;
  logs: Pick<LogStore, 'append'>;
  config: Pick<
    Config,
    | 'S3_BUCKET'
    | 'ALLOW_PRIVATE_GIT_HOSTS'
    | 'GIT_CLONE_TIMEOUT_S'
    | 'GIT_MAX_BYTES'
    | 'BUILD_TIMEOUT_S'
    | 'BUILD_MAX_ENTRIES'
    | 'BUILD_MAX_UNCOMPRESSED_BYTES'
    | 'BUILD_BASE_IMAGE_NODE'
    | 'BUILD_BASE_IMAGE_STATIC'
    | 'BUILD_BASE_IMAGE_PYTHON'
    | 'BUILD_WORK_DIR'
    | 'BUILD_CONCURRENCY'
    | 'BUILD_CONCURRENCY_PER_ORG'
    | 'ALLOW_PRIVATE_REGISTRIES'
    | 'DOCKER_HOST'
    | 'REDIS_KEY_PREFIX'
  >;
}

export interface BuildInput {
  deploymentId: string;
  orgId: string;
  revision: number;
  port: number;
  source: Exclude<DeploymentSource, { type: 'image' }>;
  /** The plan's resources; workflows started before builds had limits pass none and get the free plan's. */
  limits?: BuildLimits;
}

export interface BuildResult {
  image: string;
  kind: string;
  /** The commit a Git source's build checked out. */
  commit?: string;
  /** The uploaded zip an upload's build extracted, as the upload recorded it. */
  upload?: { sha256: string; size: number };
  durationMs: number;
}

/** Tag of a deployment's built image; removing the deployment removes every tag of this repository. */
export const builtImageRepository = (deploymentId: string) => `slipway/${deploymentId}`;

/** The build's own verdict (bad source, failed step, timeout): retrying would fail the same way. */
const buildFailed = (message: string) => ApplicationFailure.nonRetryable(message, 'BuildFailed');

/**
 * Batches build output into the deployment's log (stream `build`), in order, a few writes a second at most. A batch
 * MongoDB did not take is lost to the log, never to the build: the worker's log says how many lines went missing.
 */
function buildLog(logs: BuildDeps['logs'], deploymentId: string) {
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

/** The plan named in messages: the one whose limits these are (the workflow passes its plan's limits). */
const planOf = (limits: BuildLimits) =>
  Object.entries(PLAN_POLICIES).find(([, p]) => p.limits.memoryMb === limits.memoryMb)?.[0] ?? 'current';

/**
 * Fetches a deployment's source (the uploaded zip from S3, or a shallow clone), extracts it safely, works out
 * how to build it and builds `slipway/<deploymentId>:<revision>` on the engine, streaming every line to the
 * build log. Heartbeats throughout: a destroy cancels it, which stops git or the engine's build at once.
 * Its scratch directory is removed whatever happens.
 */
export function createBuildActivities(deps: BuildDeps) {
  const { config } = deps;
  const workRoot = config.BUILD_WORK_DIR ?? path.join(os.tmpdir(), 'slipway-builds');
  const slots = createBuildSlots(config.BUILD_CONCURRENCY, config.BUILD_CONCURRENCY_PER_ORG);
  const orgLeases =
    deps.redis &&
    createOrgBuildLeases(deps.redis, { prefix: config.REDIS_KEY_PREFIX, perOrg: config.BUILD_CONCURRENCY_PER_ORG });

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
        const { dir, commit, upload } = await fetchSource(input, work, log.line, abort.signal);
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

  async function fetchSource(
    input: BuildInput,
    work: string,
    log: (line: string) => void,
    signal: AbortSignal,
  ): Promise<{ dir: string; commit?: string; upload?: { sha256: string; size: number } }> {
    const source = input.source;
    if (source.type === 'upload') {
      const upload = await deps.uploads.get(input.orgId, source.uploadId);
      if (!upload) throw buildFailed(`the upload ${source.uploadId} has expired or was deleted; upload it again`);
      log(`fetching ${upload.filename} (${upload.size} bytes, sha256 ${upload.sha256})`);
      const zipPath = path.join(work, 'source.zip');
      const object = await deps.s3.send(new GetObjectCommand({ Bucket: config.S3_BUCKET, Key: upload.key }), {
        abortSignal: signal,
      });
      await pipeline(object.Body as NodeJS.ReadableStream, fs.createWriteStream(zipPath), { signal });
      const dir = path.join(work, 'src');
      const extracted = await extractZip(zipPath, dir, {
        maxEntries: config.BUILD_MAX_ENTRIES,
        maxUncompressedBytes: config.BUILD_MAX_UNCOMPRESSED_BYTES,
      }).catch((err: unknown) => {
        throw buildFailed(err instanceof Error ? err.message : String(err));
      });
      await fs.promises.rm(zipPath, { force: true });
      log(`extracted ${extracted.entries} entries (${extracted.bytes} bytes)`);
      return { dir: await soleTopLevelDir(dir), upload: { sha256: upload.sha256, size: upload.size } };
    }

    let token: string | undefined;
    if (source.gitTokenSecretId) {
      // Checked again here, before the value is opened: the api's check may be older than the secret's binding.
      token = await deps.vault
        .revealForGit(input.orgId, source.gitTokenSecretId, {
          url: source.repoUrl,
          environment: source.vaultEnvironment ?? 'PRODUCTION',
          allowHttp: config.ALLOW_PRIVATE_GIT_HOSTS,
        })
        .catch((err: unknown) => {
          throw err instanceof GitSecretRefusedError ? buildFailed(`gitTokenSecretId is refused: ${err.message}`) : err;
        });
      if (token === undefined) {
        throw buildFailed(`the secret ${source.gitTokenSecretId} (gitTokenSecretId) no longer exists`);
      }
    }
    const cloneTimeout = AbortSignal.timeout(config.GIT_CLONE_TIMEOUT_S * 1000);
    const { commit } = await cloneRepository({
      url: source.repoUrl,
      ...(source.branch ? { branch: source.branch } : {}),
      ...(source.commit ? { commit: source.commit } : {}),
      ...(token ? { token } : {}),
      dest: work,
      maxBytes: config.GIT_MAX_BYTES,
      allowPrivateHosts: config.ALLOW_PRIVATE_GIT_HOSTS,
      signal: AbortSignal.any([signal, cloneTimeout]),
      log,
    }).catch((err: unknown) => {
      if (cloneTimeout.aborted && !signal.aborted) {
        throw buildFailed(`git clone took longer than ${config.GIT_CLONE_TIMEOUT_S} s and was stopped`);
      }
      if (err instanceof Error && err.name === 'GitError') throw buildFailed(err.message);
      throw err;
    });
    log(`cloned commit ${commit}`);
    return { dir: cloneCheckout(work), commit };
  }

  /**
   * Builds in the sandbox: the source's Dockerfile is read first (no remote ADD, only images this org may use),
   * then built on the build network with the plan's limits, at most BUILD_CONCURRENCY at once on this worker
   * and BUILD_CONCURRENCY_PER_ORG for one organisation.
   */
  async function sandboxedBuild(
    dir: string,
    dockerfile: string,
    tag: string,
    input: BuildInput,
    log: (line: string) => void,
    signal: AbortSignal,
  ): Promise<void> {
    const text = await fs.promises.readFile(path.join(dir, dockerfile), 'utf8');
    try {
      await assertImagesUsable(deps.docker, inspectDockerfile(text), {
        orgId: input.orgId,
        allowPrivateRegistries: config.ALLOW_PRIVATE_REGISTRIES,
      });
    } catch (err) {
      throw err instanceof DockerfileRefusedError ? buildFailed(`${dockerfile}, ${err.message}`) : err;
    }
    const labelled = await labelledDockerfile(dir, dockerfile, {
      [LABELS.managed]: 'true',
      [LABELS.deploymentId]: input.deploymentId,
      [LABELS.orgId]: input.orgId,
      [LABELS.revision]: String(input.revision),
      [LABELS.instance]: deps.instance,
    });
    // The organisation's slot first (across workers), then one of this worker's: a build waiting on its own
    // organisation never holds a worker slot another organisation's build could use.
    const holder = `${input.deploymentId}/r${input.revision}/a${Context.current().info.attempt}`;
    const releaseOrg = await orgLeases?.acquire(input.orgId, holder, signal, log);
    const release = await slots.acquire(input.orgId, signal, log).catch(async (err: unknown) => {
      await releaseOrg?.();
      throw err;
    });
    let cgroup: BuildCgroup | undefined;
    try {
      // Refreshed before every build (idempotent): the rules keep RUN steps off the host and private ranges.
      const isolation = await ensureHostIsolation({ dockerHost: config.DOCKER_HOST });
      if (!isolation.applied) {
        Context.current().log.warn('host isolation is NOT installed; builds can reach the engine host', {
          reason: isolation.reason,
        });
      }
      const network = await ensureBuildNetwork(deps.docker);
      const limits = input.limits ?? PLAN_POLICIES.free.limits;
      cgroup = await createBuildCgroup(deps.docker, {
        name: holder.replace(/\//g, '-'),
        pids: limits.pids,
        ...(config.DOCKER_HOST ? { dockerHost: config.DOCKER_HOST } : {}),
      });
      if (!cgroup) Context.current().log.warn('builds run without a process limit on this engine host');
      await engineBuild(deps.docker, {
        dir,
        dockerfile: labelled,
        tag,
        network,
        limits,
        plan: planOf(limits),
        ...(cgroup ? { cgroup } : {}),
        log,
        signal,
      });
    } catch (err) {
      throw err instanceof EngineBuildError ? buildFailed(err.message) : err;
    } finally {
      await cgroup?.remove();
      release();
      await releaseOrg?.();
    }
  }
}

export type BuildActivities = ReturnType<typeof createBuildActivities>;
