import {
  ActivityCancellationType,
  type ActivityOptions,
  proxyActivities,
  proxyLocalActivities,
} from '@temporalio/workflow';

import type { DeploymentActivities } from '@activities/deployment';

/** Timeouts and retries of the deployment workflow's activities, declared once. */

/** MongoDB writes are quick. */
export const { recordStatus, createRelease, setReleaseStatus } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '10 seconds' },
});

/**
 * The same short writes as local activities: run by the worker that runs the workflow, inside its workflow task, so
 * each costs the write itself and not an activity task's and a workflow task's round trips through the server (about
 * 100 ms each on a loaded machine, see README.md, "The deploy path"). Each is idempotent: a status write carries its
 * version, a release insert its revision, the route is one replace on the router. Behind PATCHES.localWrites.
 */
const localWrites = proxyLocalActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  // As their activity forms: a record write waits out a database or Redis outage rather than fail the deploy.
  retry: { maximumInterval: '10 seconds' },
});
const localRoute = proxyLocalActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  // As the engine's: a router that keeps refusing fails the deploy with its reason.
  retry: { maximumInterval: '30 seconds', maximumAttempts: 5 },
});
export const local = {
  recordStatus: localWrites.recordStatus,
  createRelease: localWrites.createRelease,
  setReleaseStatus: localWrites.setReleaseStatus,
  routeTraffic: localRoute.routeTraffic,
};

/** Engine calls may pull images or wait on an app. */
export const engineActivity = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: { maximumInterval: '30 seconds', maximumAttempts: 5 },
} as const;
export const {
  ensureImage,
  stopDeployment,
  removeDeployment,
  prepareImage,
  listInstances,
  stopInstances,
  startInstances,
  removeInstances,
  pruneImages,
  diagnoseInstance,
  routeTraffic,
} = proxyActivities<DeploymentActivities>(engineActivity);

/**
 * A destroy cancels the start, and the engine may still be creating the container when it does: the deploy waits
 * until the activity has really ended, so the removal that follows sees whatever it created.
 */
export const { startContainer, startInstance } = proxyActivities<DeploymentActivities>({
  ...engineActivity,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

// The readiness poll heartbeats at least every 250 ms; a worker that dies mid-wait is noticed within 10 s.
export const { waitReady, waitInstanceReady } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

/**
 * The source build: it heartbeats every second, so a destroy reaches it at once, and the deploy waits until it
 * has really stopped (git killed, engine build aborted, scratch space removed) before removing anything.
 */
export const builder = (timeoutS: number) =>
  proxyActivities<DeploymentActivities>({
    startToCloseTimeout: `${timeoutS + 120} seconds`,
    heartbeatTimeout: '30 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 2, nonRetryableErrorTypes: ['BuildFailed'] },
  });

/**
 * A cloud's control plane: each call is one or a few API requests, retried by the SDK first (each adapter sets the
 * API's documented policy), then here with backoff for throttling and outages; a failure worded for the user
 * (CloudFailure types) is final.
 */
const cloudCalls: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: '2 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    maximumAttempts: 10,
    nonRetryableErrorTypes: ['CloudCredentialsRefused', 'CloudRequestRefused', 'CloudRevisionFailed'],
  },
};
export const { cloudDeployRevision, cloudServeRevision, cloudSetReplicas, cloudDestroy, cloudPushImage } =
  proxyActivities<DeploymentActivities>({
    ...cloudCalls,
    // A destroy cancels a deploy; the deploy waits for the cloud call to end, so the removal sees what it made.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
// The wait polls the cloud and heartbeats each time; a worker that dies mid-wait is noticed within 30 s.
export const { cloudWaitServing } = proxyActivities<DeploymentActivities>({
  ...cloudCalls,
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '30 seconds',
});
