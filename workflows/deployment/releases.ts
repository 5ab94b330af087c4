import { CancellationScope, isCancellation, patched, sleep } from '@temporalio/workflow';

import type { EnvSource } from '@activities/deployment/releases';
import type { Instance } from '@activities/providers/provider';
import type { ReleaseRef } from '@shared/contracts/deployment';
import type { ReleaseSource, ReleaseTrigger } from '@shared/deployments/releases-store';
import type { DeploymentStatus } from '@shared/deployments/types';

import { prepareImage, pruneImages, removeInstances, startInstance, waitInstanceReady } from './activities';
import { ONE_WRITER } from './command-rules';
import type { Entity, RecordExtra } from './entity';
import { type FailureReport, failureReport, ReleaseFailed } from './failures';
import { PATCHES } from './patches';
import { releaseSource } from './release-source';
import { overlapped, together, writes } from './writes';

type Command = FailureReport['command'];

/** An instance as the router and the record need it. */
export type Serving = Pick<Instance, 'name' | 'revision' | 'replica' | 'upstream' | 'url'>;

export const instanceViews = (instances: Serving[]) =>
  instances.map((i) => ({ name: i.name, revision: i.revision, replica: i.replica, url: i.url }));

export const replicaIndexes = (n: number) => Array.from({ length: n }, (_, i) => i);

/**
 * How long instances taken out of the route keep running. The router's config change returns while its previous
 * config is still finishing the requests it had accepted (measured: with the old upstream stopped at once, 5 of 60
 * switches under polling answered 502; with 300 ms, none), and those requests go to the old instances.
 */
export const DRAIN_MS = 2_000;

/** Waits out requests still on their way to instances that just left the route (histories from before: no wait). */
export async function drain(): Promise<void> {
  if (patched(PATCHES.drainBeforeRemove)) await sleep(DRAIN_MS);
}

/**
 * Starts these replicas of `release` and waits until each answers. Throws ReleaseFailed with the phase and the
 * provider's diagnosis; what it started is left for the caller to stop or remove.
 */
export async function startReplicas(
  e: Entity,
  release: ReleaseRef,
  indexes: number[],
  opts: { command: Command; onReady?: () => void; started?: (names: string[]) => Promise<void> },
): Promise<Instance[]> {
  const { input } = e;
  let instances: Instance[];
  try {
    instances = await Promise.all(
      indexes.map((replica) =>
        startInstance({
          deploymentId: input.deploymentId,
          orgId: input.orgId,
          revision: release.revision,
          replica,
          image: release.image,
          ...(release.imageId ? { imageId: release.imageId } : {}),
          port: input.port,
          limits: input.limits,
        }),
      ),
    );
  } catch (err) {
    if (isCancellation(err)) throw err;
    throw new ReleaseFailed(failureReport(err, 'start', opts.command, release.revision));
  }
  // The "started" write need not hold up the readiness wait: the app is probed while it is written.
  const overlap = overlapped();
  const recorded = opts.started?.(instances.map((i) => i.name));
  if (!overlap) await recorded;
  opts.onReady?.();
  const ready = Promise.all(
    instances.map((i) => waitInstanceReady(i, { port: input.port, timeoutS: input.readyTimeoutS })),
  ).catch((err: unknown) => {
    if (isCancellation(err)) throw err;
    throw new ReleaseFailed(failureReport(err, 'ready', opts.command, release.revision));
  });
  await (overlap ? together(ready, recorded) : ready);
  return instances;
}

/** Points the stable address at `instances`; returns the url the record shows. */
export async function publish(e: Entity, revision: number, instances: Serving[], command: Command) {
  try {
    const { url } = await writes().routeTraffic({
      deploymentId: e.input.deploymentId,
      route: { kind: 'publish', upstreams: instances.map((i) => i.upstream) },
    });
    e.state.routed = url !== null;
    return url ?? instances[0]?.url ?? null;
  } catch (err) {
    if (isCancellation(err)) throw err;
    throw new ReleaseFailed(failureReport(err, 'switch', command, revision));
  }
}

/** `release` serves `instances` from now on: the route switched, the release marked, the record `running`. */
export async function goLive(
  e: Entity,
  release: ReleaseRef,
  instances: Serving[],
  opts: { command: Command; message: string; extra?: RecordExtra },
): Promise<void> {
  const url = await publish(e, release.revision, instances, opts.command);
  const overlap = overlapped();
  // The release's own record and the deployment's are different documents: written side by side.
  const marked = writes().setReleaseStatus({
    deploymentId: e.input.deploymentId,
    revision: release.revision,
    status: 'active',
  });
  if (!overlap) await marked;
  release.healthy = true;
  e.state.current = release;
  const recorded = e.record('running', opts.message, {
    url,
    instances: instanceViews(instances),
    revision: release.revision,
    replicas: instances.length,
    error: null,
    ...opts.extra,
  });
  await (overlap ? together(marked, recorded) : recorded);
}

/**
 * A deployment whose first deploy ran before releases existed gets its release record (and image ID) when a
 * command first needs them, so it can be redeployed beside and rolled back to like any other.
 */
export async function ensureReleaseRecorded(e: Entity): Promise<void> {
  const { state, input } = e;
  if (!state.legacy || !state.current) return;
  const current = state.current;
  const { imageId } = await prepareImage(current.image, input.orgId);
  await writes().createRelease({
    deploymentId: input.deploymentId,
    orgId: input.orgId,
    revision: current.revision,
    image: current.image,
    imageId,
    port: input.port,
    trigger: 'deploy',
    env: { from: 'record' },
    ...(input.source.type === 'image' ? { source: releaseSource(input.source, imageId) } : {}),
  });
  current.imageId = imageId;
  if (current.healthy)
    await writes().setReleaseStatus({ deploymentId: input.deploymentId, revision: current.revision, status: 'active' });
  state.releases = [current];
  state.legacy = false;
}

/**
 * Redeploy and rollback: a new release starts beside the serving one and takes the traffic only once every
 * replica answers; then the old release's instances go. If the new one fails, it is removed, the old keeps
 * serving (the status is left as it was), lastFailure says why, and the command fails with that report.
 * `revision` is given when the release's image was built for it (new-source.ts); otherwise the next one is taken.
 */
export async function replaceRelease(
  e: Entity,
  next: {
    image: string;
    imageId: string;
    env: EnvSource;
    trigger: ReleaseTrigger;
    rollbackOf?: number;
    revision?: number;
    /** New code's source (null: new code whose source its build did not say); absent, the code is not new. */
    source?: ReleaseSource | null;
    /** The status to go back to if the release fails, when the caller changed it first (a build before it). */
    statusBefore?: DeploymentStatus;
  },
): Promise<void> {
  const { state, input } = e;
  const command = next.trigger === 'rollback' ? 'rollback' : 'redeploy';
  const revision = next.revision ?? state.nextRevision++;
  // Code that is not new is the release's it comes from: a rollback's target, or the serving one for an env change.
  const sourceOf = next.rollbackOf ?? state.current?.revision;
  const created = await writes().createRelease({
    deploymentId: input.deploymentId,
    orgId: input.orgId,
    revision,
    image: next.image,
    imageId: next.imageId,
    port: input.port,
    trigger: next.trigger,
    env: next.env,
    ...(next.rollbackOf !== undefined ? { rollbackOf: next.rollbackOf } : {}),
    ...(next.source
      ? { source: next.source }
      : next.source === undefined && sourceOf !== undefined
        ? { sourceOf }
        : {}),
  });
  const release: ReleaseRef = {
    revision,
    image: next.image,
    imageId: created.imageId,
    healthy: false,
    ...(created.volumes?.length ? { volumes: created.volumes.length } : {}),
  };
  const previous = state.current;
  const statusBefore = next.statusBefore ?? state.status;
  const replicas = Math.max(1, state.replicas);
  const what =
    next.trigger === 'rollback'
      ? `rolling back to release ${next.rollbackOf} as release ${revision}`
      : `release ${revision}`;
  await e.record(
    statusBefore === 'running' ? 'running' : 'deploying',
    `${what}: starting ${replicas} instance${replicas === 1 ? '' : 's'} beside the serving one (env: ${created.envNames.join(', ') || 'none'})`,
  );
  let instances: Instance[];
  try {
    // The validators keep a scale and an attach apart; an attach that raced past them stops here, not at two writers.
    if (release.volumes && replicas > 1)
      throw new ReleaseFailed({ phase: 'start', command, revision, message: ONE_WRITER, hint: ONE_WRITER });
    instances = await startReplicas(e, release, replicaIndexes(replicas), { command });
    await goLive(e, release, instances, {
      command,
      message: `release ${revision} serves${previous ? `; release ${previous.revision} is being removed` : ''}`,
      extra: { envOfRevision: revision, lastFailure: null },
    });
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ReleaseFailed)) throw err;
    await CancellationScope.nonCancellable(async () => {
      await removeInstances(input.deploymentId, { revision });
      await writes().setReleaseStatus({ deploymentId: input.deploymentId, revision, status: 'failed' });
      state.releases = keep(e, [release, ...state.releases]);
      await e.record(statusBefore === 'running' ? 'running' : statusBefore, `${what} failed: ${err.report.message}`, {
        lastFailure: err.report,
      });
    });
    throw err;
  }
  state.replicas = replicas;
  await drain();
  await removeInstances(input.deploymentId, { exceptRevision: revision });
  if (previous && previous.revision !== revision)
    await writes().setReleaseStatus({
      deploymentId: input.deploymentId,
      revision: previous.revision,
      status: 'superseded',
    });
  state.releases = keep(e, [release, ...state.releases]);
  await pruneImages(input.deploymentId, [...new Set(state.releases.map((r) => r.imageId).filter(Boolean))]);
}

/** The last RELEASES_KEPT releases: their images stay, and they are what a rollback may go to. */
function keep(e: Entity, releases: ReleaseRef[]): ReleaseRef[] {
  return releases.slice(0, e.input.releasesKept ?? 10);
}
