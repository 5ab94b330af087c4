import {
  ActivityFailure,
  CancellationScope,
  condition,
  defineSignal,
  isCancellation,
  proxyActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';

import type { Activities } from '../activities';
import type { DeploymentFailure } from '../shared/deployments';

/** Timeouts and retries, declared once: MongoDB writes are quick; engine calls may pull images or wait on an app. */
const { recordStatus } = proxyActivities<Activities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '10 seconds' },
});
const { ensureImage, startContainer, removeDeployment } = proxyActivities<Activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumInterval: '30 seconds', maximumAttempts: 5 },
});
const { waitReady } = proxyActivities<Activities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '30 seconds',
  retry: { maximumAttempts: 3 },
});

export interface DeploymentWorkflowInput {
  deploymentId: string;
  orgId: string;
  image: string;
  port: number;
  envVars: Record<string, string>;
  revision: number;
  limits: { memoryMb: number; cpus: number; pids: number };
  readyTimeoutS: number;
  /** Version of the record the api wrote (the `queued` one); every later write counts up from here. */
  version: number;
}

/** Sent by the api after it has hidden the record from reads: the DELETE answers 204 without waiting. */
export const destroySignal = defineSignal('destroy');

function failureMessage(err: unknown): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return cause instanceof Error ? cause.message : String(cause);
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

  const deployScope = new CancellationScope();
  const deploying = deployScope.run(async () => {
    let phase: DeploymentFailure['phase'] = 'pull';
    try {
      await record('deploying', `preparing image ${input.image}`);
      const { pulled } = await ensureImage(input.image);
      phase = 'start';
      const started = await startContainer({ ...input });
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
      const message = failureMessage(err);
      await CancellationScope.nonCancellable(() =>
        record('failed', message, { url: null, error: { code: 'DEPLOYMENT_FAILED', phase, message } }),
      );
    }
  });

  await Promise.race([deploying.catch(() => undefined), condition(() => destroyRequested)]);
  if (destroyRequested) deployScope.cancel();
  await deploying.catch((err: unknown) => {
    if (!isCancellation(err)) throw err;
  });

  await condition(() => destroyRequested);
  // The record is already hidden; remove whatever the deployment holds on the engine.
  await CancellationScope.nonCancellable(async () => {
    await removeDeployment(input.deploymentId);
  });
}
