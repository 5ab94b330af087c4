import { ActivityFailure, CancellationScope, isCancellation } from '@temporalio/workflow';

import type { CloudRevision } from '@activities/providers/cloud';
import type { CloudProvider } from '@shared/cloud/credentials';
import { cloudFailureDetails } from '@shared/cloud/failures';
import type { ReleaseRef } from '@shared/contracts/deployment';
import type { DeploymentFailure, DeploymentSource } from '@shared/deployments/types';

import {
  cloudDeployRevision,
  cloudDestroy,
  cloudPushImage,
  cloudServeRevision,
  cloudSetReplicas,
  cloudWaitServing,
} from './activities';
import type { Entity } from './entity';
import { failureMessage, type FailureReport, type Phase, ReleaseFailed } from './failures';
import { obtainImage } from './first-deploy';
import { releaseSource } from './release-source';
import { writes } from './writes';

/**
 * A deployment on a cloud provider (docs/architecture.md, "Cloud providers"): the same commands, carried out by the
 * cloud. The cloud keeps the revisions, runs the replicas and serves the URL, so there are no instances to start or
 * routes to switch here: a release is a revision taking all traffic, a stop is zero instances, a rollback sends the
 * traffic back to a kept revision. Every step is an activity on the cloud's SDK (activities/deployment/cloud.ts).
 */

const target = (e: Entity) => ({
  deploymentId: e.input.deploymentId,
  orgId: e.input.orgId,
  provider: e.input.provider as CloudProvider,
  region: e.input.region!,
});

/** Clouds take minutes to roll out a revision; the engine's readiness timeout is for one container's start. */
const servingTimeoutS = (e: Entity) => Math.max(e.input.readyTimeoutS, 900);

const revisionOf = (release: ReleaseRef): CloudRevision => ({
  revision: release.revision,
  name: release.cloudRevision!,
});

/** The hint a cloud failure carries (shared/cloud/failures.ts), else the phase's own. */
function cloudReport(err: unknown, phase: Phase, command: FailureReport['command'], revision: number): FailureReport {
  const hint = cloudFailureDetails(err instanceof ActivityFailure ? err.cause : err)?.hint;
  return {
    phase,
    command,
    revision,
    message: failureMessage(err, phase),
    ...(hint !== undefined ? { hint } : {}),
  };
}

/** The image the cloud pulls: an image as given, or a source built here and pushed to the org's registry. */
async function cloudImage(
  e: Entity,
  source: DeploymentSource,
  revision: number,
  onPhase: (p: DeploymentFailure['phase']) => void,
) {
  if (source.type === 'image') return { image: source.image };
  const { image: localImage, built } = await obtainImage({ ...e, input: { ...e.input, source, revision } }, onPhase);
  onPhase('pull');
  await e.record(e.state.status === 'running' ? 'running' : 'deploying', `pushing the build to the registry`);
  const { image } = await cloudPushImage({ ...target(e), revision, localImage });
  return { image, built };
}

/** Runs `release` as the cloud's serving revision and waits until it serves; returns its URL. */
async function serve(e: Entity, release: ReleaseRef, how: 'new' | 'kept'): Promise<string | null> {
  const t = target(e);
  const replicas = Math.max(1, e.state.replicas);
  let revision: CloudRevision;
  if (how === 'new') {
    revision = await cloudDeployRevision({
      ...t,
      revision: release.revision,
      image: release.image,
      port: e.input.port,
      replicas,
      limits: { memoryMb: e.input.limits.memoryMb, cpus: e.input.limits.cpus },
    });
    release.cloudRevision = revision.name;
  } else {
    revision = revisionOf(release);
    await cloudServeRevision({ ...t, revision, replicas });
  }
  const { url } = await cloudWaitServing({ ...t, revision, replicas, timeoutS: servingTimeoutS(e) });
  return url;
}

/** The first deploy: the image (built and pushed for a source), its release, its revision serving. */
export async function cloudFirstDeploy(e: Entity): Promise<void> {
  const { input, state } = e;
  let phase: DeploymentFailure['phase'] = input.source.type === 'image' ? 'pull' : 'build';
  try {
    if (input.source.type === 'image')
      await e.record(
        'deploying',
        `creating the ${input.provider} service in ${input.region} with ${input.source.image}`,
      );
    const { image, built } = await cloudImage(e, input.source, input.revision, (p) => (phase = p));
    const source = releaseSource(input.source, image, built);
    await writes().createRelease({
      deploymentId: input.deploymentId,
      orgId: input.orgId,
      revision: input.revision,
      image,
      imageId: image,
      port: input.port,
      trigger: 'deploy',
      env: { from: 'record' },
      ...(source ? { source } : {}),
    });
    const release: ReleaseRef = { revision: input.revision, image, imageId: image, healthy: false };
    state.current = release;
    state.releases = [release];
    phase = 'start';
    const url = await serve(e, release, 'new');
    release.healthy = true;
    await writes().setReleaseStatus({ deploymentId: input.deploymentId, revision: release.revision, status: 'active' });
    await e.record('running', `serving revision ${release.cloudRevision} on ${input.provider}`, {
      url,
      revision: release.revision,
      replicas: Math.max(1, state.replicas),
      error: null,
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    const report = cloudReport(err, phase, 'deploy', input.revision);
    const failedPhase = phase === 'start' && state.current?.cloudRevision ? 'ready' : phase;
    await CancellationScope.nonCancellable(() =>
      e.record('failed', report.message, {
        url: null,
        error: { code: 'DEPLOYMENT_FAILED', phase: failedPhase, message: report.message },
        lastFailure: { ...report, phase: failedPhase },
      }),
    );
  }
}

/** Zero instances: the service, its URL and its revisions stay. */
export async function cloudStop(e: Entity, message = 'stopped; start it again with POST /deployments/{id}/start') {
  await e.record('stopping', `scaling ${e.input.provider} to zero instances`);
  await cloudSetReplicas({ ...target(e), replicas: 0 });
  await e.record('stopped', message, { instances: [] });
}

/** The serving revision with its replicas again; if it does not serve, it is stopped again, saying why. */
export async function cloudStart(e: Entity, command: 'start' | 'scale' = 'start') {
  const { state } = e;
  const release = state.current!;
  state.replicas = Math.max(1, state.replicas);
  await e.record('deploying', `starting revision ${release.cloudRevision} with ${state.replicas} instance(s)`);
  try {
    await cloudSetReplicas({ ...target(e), replicas: state.replicas });
    const { url } = await cloudWaitServing({
      ...target(e),
      revision: revisionOf(release),
      replicas: state.replicas,
      timeoutS: servingTimeoutS(e),
    });
    await e.record('running', `revision ${release.cloudRevision} serving again`, {
      url,
      replicas: state.replicas,
      lastFailure: null,
    });
  } catch (err) {
    if (isCancellation(err)) throw err;
    const report = cloudReport(err, 'ready', command, release.revision);
    await CancellationScope.nonCancellable(async () => {
      await cloudSetReplicas({ ...target(e), replicas: 0 });
      await e.record('stopped', `start failed: ${report.message}`, { instances: [], lastFailure: report });
    });
    throw new ReleaseFailed(report);
  }
}

/** 0 is a stop; from stopped, a start; else the cloud scales the serving revision. */
export async function cloudScale(e: Entity, replicas: number) {
  const { state } = e;
  if (replicas === 0) {
    state.replicas = 0;
    if (state.status !== 'stopped') await cloudStop(e, 'scaled to 0 instances: stopped');
    return;
  }
  state.replicas = replicas;
  if (state.status !== 'running') return cloudStart(e, 'scale');
  await cloudSetReplicas({ ...target(e), replicas });
  await e.record('running', `scaled to ${replicas} instance${replicas === 1 ? '' : 's'}`, {
    replicas,
    lastFailure: null,
  });
}

export interface CloudRelease {
  image: string;
  env: { from: 'set'; envRef: string } | { from: 'release'; revision: number } | { from: 'record' };
  trigger: 'redeploy' | 'rollback';
  rollbackOf?: ReleaseRef;
  source?: DeploymentSource;
}

/**
 * A redeploy (new env or new code: a new revision) or a rollback (the kept revision takes the traffic back, recorded
 * as a new release naming the one it returns to). Until the new one serves the old one serves; if it never does,
 * the traffic goes back to the old one and the command fails with the report.
 */
export async function cloudReplace(e: Entity, r: CloudRelease): Promise<void> {
  const { input, state } = e;
  const revision = state.nextRevision++;
  const before = state.current;
  const statusBefore = state.status;
  const command = r.trigger;
  let phase: Phase = r.source && r.source.type !== 'image' ? 'build' : 'pull';
  let release: ReleaseRef | undefined;
  try {
    let image = r.image;
    let built;
    if (r.source) ({ image, built } = await cloudImage(e, r.source, revision, (p) => (phase = p)));
    const source = r.source ? releaseSource(r.source, image, built) : undefined;
    await writes().createRelease({
      deploymentId: input.deploymentId,
      orgId: input.orgId,
      revision,
      image,
      imageId: image,
      port: input.port,
      trigger: r.trigger,
      env: r.env,
      ...(r.rollbackOf ? { rollbackOf: r.rollbackOf.revision } : {}),
      ...(source ? { source } : {}),
    });
    release = { revision, image, imageId: image, healthy: false };
    if (r.rollbackOf) release.cloudRevision = r.rollbackOf.cloudRevision;
    phase = 'start';
    await e.record(
      statusBefore === 'running' ? 'running' : 'deploying',
      `release ${revision}: rolling out on ${input.provider}`,
    );
    const url = await serve(e, release, r.rollbackOf ? 'kept' : 'new');
    release.healthy = true;
    state.current = release;
    state.releases = [release, ...state.releases].slice(0, input.releasesKept ?? 10);
    await writes().setReleaseStatus({ deploymentId: input.deploymentId, revision, status: 'active' });
    if (before)
      await writes().setReleaseStatus({
        deploymentId: input.deploymentId,
        revision: before.revision,
        status: 'superseded',
      });
    await e.record(
      'running',
      r.rollbackOf
        ? `rolled back to release ${r.rollbackOf.revision} (revision ${release.cloudRevision})`
        : `release ${revision} serving (revision ${release.cloudRevision})`,
      {
        url,
        revision,
        replicas: Math.max(1, state.replicas),
        error: null,
        lastFailure: null,
        ...(r.env.from !== 'record' ? { envOfRevision: revision } : {}),
      },
    );
  } catch (err) {
    if (isCancellation(err)) throw err;
    const report = cloudReport(err, phase, command, revision);
    await CancellationScope.nonCancellable(async () => {
      if (release) await writes().setReleaseStatus({ deploymentId: input.deploymentId, revision, status: 'failed' });
      // The old revision takes the traffic back, if there was one serving.
      if (before?.cloudRevision && statusBefore === 'running' && phase !== 'build')
        await cloudServeRevision({ ...target(e), revision: revisionOf(before), replicas: Math.max(1, state.replicas) });
      await e.record(statusBefore, `release ${revision} failed: ${report.message}`, { lastFailure: report });
    });
    throw new ReleaseFailed(report);
  }
}

/** Everything the deployment holds in its cloud. */
export const cloudRemove = (e: Entity) => cloudDestroy(target(e));
