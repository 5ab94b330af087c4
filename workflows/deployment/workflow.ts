import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  isCancellation,
  log,
  patched,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';

import type { Activities } from '../../activities';
import type { DeploymentFailure } from '../../shared/deployments/types';
import { type DeploymentWorkflowInput, destroySignal } from './commands';

/** Timeouts and retries, declared once: MongoDB writes are quick; engine calls may pull images or wait on an app. */
const { recordStatus } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '10 seconds' },
});
const engineActivity = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumInterval: '30 seconds', maximumAttempts: 5 },
} as const;
const {
  ensureImage,
  startContainer: startContainerUnwaited,
  stopDeployment,
  removeDeployment,
} = proxyActivities<Activities>(engineActivity);
/**
 * A destroy cancels the start, and the engine may still be creating the container when it does: the deploy waits
 * until the activity has really ended, so the removal that follows sees whatever it created.
 */
const { startContainer } = proxyActivities<Activities>({
  ...engineActivity,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/**
 * Changes to this workflow that alter its commands, each behind `patched()`: deployments already running the code
 * before it replay their recorded histories unchanged (DESIGN.md §4).
 */
const PATCHES = {
  /** startContainer waits for its cancellation to complete. */
  startWaitsForCancel: 'start-container-waits-for-cancel',
  /** A workflow started by a destroy (signalWithStart) goes straight to removal. */
  destroyedBeforeDeploy: 'destroyed-before-deploy',
} as const;
// The readiness poll heartbeats every 250 ms; a worker that dies mid-wait is noticed within 10 s.
const { waitReady } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});


/**
 * The source build: it heartbeats every second, so a destroy reaches it at once, and the deploy waits until it
 * has really stopped (git killed, engine build aborted, scratch space removed) before removing anything.
 */
const builder = (timeoutS: number) =>
  proxyActivities<Activities>({
    startToCloseTimeout: `${timeoutS + 120} seconds`,
    heartbeatTimeout: '30 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 2, nonRetryableErrorTypes: ['BuildFailed'] },
  });


const PHASE_WORDS: Record<DeploymentFailure['phase'], string> = {
  build: 'building the source',
  pull: 'preparing the image',
  start: 'starting the container',
  ready: 'waiting for the app to answer',
  destroy: 'removing the deployment',
};

/**
 * What the caller reads in `error.message` and the failed event. A non-retryable ApplicationFailure is a failure we
 * worded for the caller (bad input, a build error, an app that exited); anything else — engine, driver or network
 * text that outlived its retries — stays in the worker's log, and the caller is told what to do instead.
 */
function failureMessage(err: unknown, phase: DeploymentFailure['phase']): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.nonRetryable) return cause.message;
  log.warn('deployment failed on an unexpected error', {
    phase,
    error: cause instanceof Error ? cause.message : String(cause),
  });
  return `The deployment failed while ${PHASE_WORDS[phase]} because of an internal error; deploy again, and if it fails again read the logs or contact the operator.`;
}

/**
 * One deployment, from queued to destroyed: deploy the image, then hold the deployment until it is destroyed.
 * A destroy that arrives mid-deploy cancels the deploy first, so nothing it started outlives the record.
 */
export async function deploymentWorkflow(input: DeploymentWorkflowInput): Promise<void> {
  upsertSearchAttributes({ DeploymentId: [input.deploymentId], OrgId: [input.orgId] });
  let version = input.version;
  const record = (status: Parameters<Activities['recordStatus']>[0]['status'], message: string, extra = {}) =>
    recordStatus({ deploymentId: input.deploymentId, version: ++version, status, message, ...extra });

  let destroyRequested = false;
  setHandler(destroySignal, () => void (destroyRequested = true));
  const removeAll = () =>
    CancellationScope.nonCancellable(async () => {
      await removeDeployment(input.deploymentId);
    });
  if (destroyRequested && patched(PATCHES.destroyedBeforeDeploy)) {
    await removeAll();
    return;
  }

  const deployScope = new CancellationScope();
  const deploying = deployScope.run(async () => {
    let phase: DeploymentFailure['phase'] = 'pull';
    let image: string;
    try {
      if (input.source.type !== 'image') {
        phase = 'build';
        const source = input.source;
        await record(
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
        phase = 'pull';
        image = built.image;
        await record(
          'deploying',
          `built ${built.image} (${built.kind}${built.commit ? `, commit ${built.commit.slice(0, 12)}` : ''}) in ${(built.durationMs / 1000).toFixed(1)} s`,
        );
      } else {
        image = input.source.image;
        await record('deploying', `preparing image ${image}`);
      }
      const { pulled } = await ensureImage(image, input.orgId);
      phase = 'start';
      const start = patched(PATCHES.startWaitsForCancel) ? startContainer : startContainerUnwaited;
      const started = await start({
        deploymentId: input.deploymentId,
        orgId: input.orgId,
        revision: input.revision,
        image,
        port: input.port,
        limits: input.limits,
        ...(input.envVars ? { envVars: input.envVars } : {}),
      });
      await record(
        'deploying',
        `${pulled ? 'pulled image; ' : ''}container ${started.name} started, waiting for port ${input.port}`,
        {
          container: { id: started.id, name: started.name, hostPort: started.hostPort },
        },
      );
      phase = 'ready';
      await waitReady({ containerId: started.id, port: input.port, timeoutS: input.readyTimeoutS });
      await record('running', `answering on port ${input.port}`, { url: started.url });
    } catch (err) {
      if (isCancellation(err)) throw err;
      const message = failureMessage(err, phase);
      await CancellationScope.nonCancellable(async () => {
        // A container that failed to become ready is stopped, not removed: its logs explain the failure.
        if (phase === 'start' || phase === 'ready') await stopDeployment(input.deploymentId);
        await record('failed', message, { url: null, error: { code: 'DEPLOYMENT_FAILED', phase, message } });
      });
    }
  });

  await Promise.race([deploying.catch(() => undefined), condition(() => destroyRequested)]);
  if (destroyRequested) deployScope.cancel();
  await deploying.catch((err: unknown) => {
    if (!isCancellation(err)) throw err;
  });

  await condition(() => destroyRequested);
  // The record is already hidden; remove whatever the deployment holds on the engine.
  await removeAll();
}
