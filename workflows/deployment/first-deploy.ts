import { CancellationScope, deprecatePatch, isCancellation } from '@temporalio/workflow';

import type { BuildResult } from '@activities/deployment/build';
import type { DeploymentFailure } from '@shared/deployments/types';

import {
  builder,
  ensureImage,
  prepareImage,
  startContainer,
  stopDeployment,
  stopInstances,
  waitReady,
} from './activities';
import type { Entity } from './entity';
import { failureMessage, failureReport, ReleaseFailed } from './failures';
import { PATCHES } from './patches';
import { releaseSource } from './release-source';
import { goLive, replicaIndexes, startReplicas } from './releases';
import { overlapped, together, writes } from './writes';

/**
 * Builds the source (when it is one) and returns the image reference to run, with what the build read, recording the
 * steps.
 */
export async function obtainImage(
  e: Entity,
  onPhase: (p: DeploymentFailure['phase']) => void,
  overlap = false,
): Promise<{ image: string; built?: BuildResult; recorded?: Promise<void> }> {
  const { input } = e;
  if (input.source.type === 'image') {
    const recorded = e.record('deploying', `preparing image ${input.source.image}`);
    // With `overlap` the caller prepares the image while this is written, and waits for both.
    if (overlap) return { image: input.source.image, recorded };
    await recorded;
    return { image: input.source.image };
  }
  onPhase('build');
  const source = input.source;
  await e.record(
    'building',
    source.type === 'git'
      ? `cloning ${source.repoUrl}${source.branch ? ` (branch ${source.branch})` : ''} and building`
      : 'extracting the uploaded archive and building',
  );
  const built = await builder(input.buildTimeoutS ?? 900).buildSource({
    deploymentId: input.deploymentId,
    orgId: input.orgId,
    revision: input.revision,
    port: input.port,
    source,
    limits: input.limits,
  });
  onPhase('pull');
  const recorded = e.record(
    'deploying',
    `built ${built.image} (${built.kind}${built.commit ? `, commit ${built.commit.slice(0, 12)}` : ''}) in ${(built.durationMs / 1000).toFixed(1)} s`,
  );
  if (overlap) return { image: built.image, built, recorded };
  await recorded;
  return { image: built.image, built };
}

/**
 * The first deploy as code from before releases ran it (one container, its own address as the url): workflows
 * started then replay through exactly these commands. Kept while stored histories take this path: every
 * deployment-*.json in test/fixtures/histories does (none has the `deployment-releases` marker), and between them they
 * call every legacy activity here: ensureImage and startContainer (all but deployment-destroyed-while-building),
 * waitReady (deployment-image-running-destroyed, deployment-destroyed-while-starting, deployment-zip-running-destroyed,
 * deployment-open-running), stopDeployment (deployment-failed-destroyed, deployment-open-failed).
 */
async function legacyDeploy(e: Entity): Promise<void> {
  const { input, state } = e;
  let phase: DeploymentFailure['phase'] = 'pull';
  try {
    const { image } = await obtainImage(e, (p) => (phase = p));
    state.current = { revision: input.revision, image, imageId: '', healthy: false };
    const { pulled } = await ensureImage(image, input.orgId);
    phase = 'start';
    // Every stored history that reaches the start recorded this patch, so the start that did not wait for its
    // cancellation is gone; the marker is still accepted on replay (a marker with no call at all is not).
    deprecatePatch(PATCHES.startWaitsForCancel);
    const started = await startContainer({
      deploymentId: input.deploymentId,
      orgId: input.orgId,
      revision: input.revision,
      image,
      port: input.port,
      limits: input.limits,
      ...(input.envVars ? { envVars: input.envVars } : {}),
    });
    await e.record(
      'deploying',
      `${pulled ? 'pulled image; ' : ''}container ${started.name} started, waiting for port ${input.port}`,
      { container: { id: started.id, name: started.name, hostPort: started.hostPort } },
    );
    phase = 'ready';
    await waitReady({ containerId: started.id, port: input.port, timeoutS: input.readyTimeoutS });
    await e.record('running', `answering on port ${input.port}`, { url: started.url });
    state.current.healthy = true;
  } catch (err) {
    if (isCancellation(err)) throw err;
    const message = failureMessage(err, phase);
    await CancellationScope.nonCancellable(async () => {
      // A container that failed to become ready is stopped, not removed: its logs explain the failure.
      if (phase === 'start' || phase === 'ready') await stopDeployment(input.deploymentId);
      await e.record('failed', message, { url: null, error: { code: 'DEPLOYMENT_FAILED', phase, message } });
    });
  }
}

/** The first deploy as a release: its image ID recorded, its replicas started, its stable address published. */
async function releaseDeploy(e: Entity): Promise<void> {
  const { input, state } = e;
  let phase: DeploymentFailure['phase'] = 'pull';
  try {
    const overlap = overlapped();
    const { image, built, recorded } = await obtainImage(e, (p) => (phase = p), overlap);
    const preparing = prepareImage(image, input.orgId);
    await together(preparing, recorded);
    const { pulled, imageId } = await preparing;
    const source = releaseSource(input.source, imageId, built);
    const created = await writes().createRelease({
      deploymentId: input.deploymentId,
      orgId: input.orgId,
      revision: input.revision,
      image,
      imageId,
      port: input.port,
      trigger: 'deploy',
      env: { from: 'record' },
      ...(source ? { source } : {}),
    });
    // Histories from before attachments return no volumes, so their state stays as it was.
    const volumes = created.volumes?.length;
    const release = { revision: input.revision, image, imageId, healthy: false, ...(volumes ? { volumes } : {}) };
    state.current = release;
    state.releases = [release];
    phase = 'start';
    const instances = await startReplicas(e, release, replicaIndexes(state.replicas), {
      command: 'deploy',
      onReady: () => (phase = 'ready'),
      started: (names) =>
        e.record(
          'deploying',
          `${pulled ? 'pulled image; ' : ''}${names.length === 1 ? `container ${names[0]}` : `${names.length} containers`} started, waiting for port ${input.port}`,
        ),
    });
    await goLive(e, release, instances, { command: 'deploy', message: `answering on port ${input.port}` });
  } catch (err) {
    if (isCancellation(err)) throw err;
    const report = err instanceof ReleaseFailed ? err.report : failureReport(err, phase, 'deploy', input.revision);
    const failedPhase = report.phase === 'switch' ? 'start' : report.phase;
    await CancellationScope.nonCancellable(async () => {
      // Instances that failed to become ready are stopped, not removed: their logs explain the failure.
      if (failedPhase === 'start' || failedPhase === 'ready') await stopInstances(input.deploymentId, {});
      await e.record('failed', report.message, {
        url: null,
        error: { code: 'DEPLOYMENT_FAILED', phase: failedPhase, message: report.message },
        lastFailure: report,
      });
    });
  }
}

/** The deployment's first deploy, in the shape its workflow's code version decides. */
export function firstDeploy(e: Entity, withReleases: boolean): Promise<void> {
  return withReleases ? releaseDeploy(e) : legacyDeploy(e);
}
