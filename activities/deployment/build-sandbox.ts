import fs from 'node:fs';
import path from 'node:path';

import { Context } from '@temporalio/activity';

import { type BuildCgroup, createBuildCgroup } from '@shared/build/build-cgroup';
import { engineBuild, EngineBuildError } from '@shared/build/docker-build';
import { DockerfileRefusedError, inspectDockerfile } from '@shared/build/dockerfile-policy';
import { assertImagesUsable } from '@shared/build/image-access';
import { labelledDockerfile } from '@shared/build/labelled-dockerfile';
import { createOrgBuildLeases } from '@shared/build/org-leases';
import { type BuildLimits, createBuildSlots, ensureBuildNetwork } from '@shared/build/sandbox';
import { LABELS } from '@shared/constants';
import { PLAN_POLICIES } from '@shared/plans';

import { ensureHostIsolation, isolationOptions } from '../providers/host-firewall';
import { type BuildDeps, buildFailed, type BuildInput } from './build-deps';

/** The plan named in messages: the one whose limits these are (the workflow passes its plan's limits). */
const planOf = (limits: BuildLimits) =>
  Object.entries(PLAN_POLICIES).find(([, p]) => p.limits.memoryMb === limits.memoryMb)?.[0] ?? 'current';

/**
 * Builds in the sandbox: the source's Dockerfile is read first (no remote ADD, only images this org may use),
 * then built on the build network with the plan's limits, at most BUILD_CONCURRENCY at once on this worker
 * and BUILD_CONCURRENCY_PER_ORG for one organisation.
 */
export function createSandboxedBuild(deps: Pick<BuildDeps, 'docker' | 'redis' | 'instance' | 'config'>) {
  const { config } = deps;
  const slots = createBuildSlots(config.BUILD_CONCURRENCY, config.BUILD_CONCURRENCY_PER_ORG);
  const orgLeases =
    deps.redis &&
    createOrgBuildLeases(deps.redis, { prefix: config.REDIS_KEY_PREFIX, perOrg: config.BUILD_CONCURRENCY_PER_ORG });

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
      const isolation = await ensureHostIsolation(isolationOptions(config));
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

  return sandboxedBuild;
}
