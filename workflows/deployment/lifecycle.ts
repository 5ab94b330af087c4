import { CancellationScope, isCancellation } from '@temporalio/workflow';

import type { Instance } from '@activities/providers/provider';

import { listInstances, removeInstances, startInstances, stopInstances, waitInstanceReady } from './activities';
import type { Entity } from './entity';
import { failureReport, ReleaseFailed } from './failures';
import { drain, goLive, instanceViews, publish, replicaIndexes, type Serving, startReplicas } from './releases';
import { writes } from './writes';

/** Stops every instance and keeps them; the stable address answers the router's "stopped" page meanwhile. */
export async function stop(
  e: Entity,
  message = 'stopped; start it again with POST /deployments/{id}/start',
): Promise<void> {
  const { input, state } = e;
  await e.record('stopping', `stopping ${state.replicas} instance${state.replicas === 1 ? '' : 's'}`);
  await stopInstances(input.deploymentId, {});
  const { url } = await writes().routeTraffic({ deploymentId: input.deploymentId, route: { kind: 'stopped' } });
  await e.record('stopped', message, { url, instances: [] });
}

/**
 * Starts the serving release's instances again (the same containers), with as many replicas as it is scaled to:
 * missing ones are made, extra ones removed. If it does not come up, the instances are stopped again and the
 * deployment stays `stopped`, with lastFailure saying why.
 */
export async function start(e: Entity, command: 'start' | 'scale' = 'start'): Promise<void> {
  const { input, state } = e;
  const release = state.current!;
  const replicas = Math.max(1, state.replicas);
  const plural = replicas === 1 ? '' : 's';
  await e.record('deploying', `starting release ${release.revision} with ${replicas} instance${plural}`);
  try {
    await removeInstances(input.deploymentId, { revision: release.revision, replicasFrom: replicas });
    let restarted: Instance[];
    try {
      restarted = await startInstances(input.deploymentId, { revision: release.revision });
    } catch (err) {
      if (isCancellation(err)) throw err;
      throw new ReleaseFailed(failureReport(err, 'start', command, release.revision));
    }
    try {
      const opts = { port: input.port, timeoutS: input.readyTimeoutS };
      await Promise.all(restarted.map((i) => waitInstanceReady(i, opts)));
    } catch (err) {
      if (isCancellation(err)) throw err;
      throw new ReleaseFailed(failureReport(err, 'ready', command, release.revision));
    }
    const have = new Set(restarted.map((i) => i.replica));
    const missing = replicaIndexes(replicas).filter((i) => !have.has(i));
    const added = missing.length ? await startReplicas(e, release, missing, { command }) : [];
    state.replicas = replicas;
    await goLive(
      e,
      release,
      [...restarted, ...added].sort((a, b) => a.replica - b.replica),
      {
        command,
        message: `release ${release.revision} answering again with ${replicas} instance${plural}`,
        extra: { lastFailure: null },
      },
    );
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ReleaseFailed)) throw err;
    await CancellationScope.nonCancellable(async () => {
      await stopInstances(input.deploymentId, {});
      await e.record('stopped', `start failed: ${err.report.message}`, { instances: [], lastFailure: err.report });
    });
    throw err;
  }
}

/**
 * Runs `replicas` instances of the serving release (replica indexes 0..n-1): new ones start and answer before the
 * router spreads traffic over them; surplus ones leave the router before they are removed. 0 is a stop; from
 * stopped, a start.
 */
export async function scale(e: Entity, replicas: number): Promise<void> {
  const { input, state } = e;
  if (replicas === 0) {
    state.replicas = 0;
    if (state.status !== 'stopped') await stop(e, 'scaled to 0 instances: stopped');
    return;
  }
  if (state.status !== 'running') {
    state.replicas = replicas;
    await start(e, 'scale');
    return;
  }
  const release = state.current!;
  const running: Serving[] = (await listInstances(input.deploymentId, { revision: release.revision }))
    .filter((i) => i.state === 'running' && i.upstream && i.url && i.replica < replicas)
    .map((i) => ({ name: i.name, revision: i.revision, replica: i.replica, upstream: i.upstream!, url: i.url! }));
  const missing = replicaIndexes(replicas).filter((n) => !running.some((i) => i.replica === n));
  let added: Instance[] = [];
  try {
    if (missing.length) added = await startReplicas(e, release, missing, { command: 'scale' });
  } catch (err) {
    if (isCancellation(err) || !(err instanceof ReleaseFailed)) throw err;
    await CancellationScope.nonCancellable(async () => {
      // Replicas are numbered densely from 0, so the ones just tried are those from the first missing index on.
      await removeInstances(input.deploymentId, { revision: release.revision, replicasFrom: Math.min(...missing) });
      await e.record('running', `scaling to ${replicas} failed: ${err.report.message}`, { lastFailure: err.report });
    });
    throw err;
  }
  const serving = [...running, ...added].sort((a, b) => a.replica - b.replica);
  const url = await publish(e, release.revision, serving, 'scale');
  // Out of the router first, then gone once the requests already sent to it are answered.
  await drain();
  await removeInstances(input.deploymentId, { revision: release.revision, replicasFrom: replicas });
  state.replicas = replicas;
  await e.record('running', `scaled to ${replicas} instance${replicas === 1 ? '' : 's'}`, {
    url,
    replicas,
    instances: instanceViews(serving),
    lastFailure: null,
  });
}
