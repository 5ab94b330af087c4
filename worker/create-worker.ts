import { type NativeConnection, Worker } from '@temporalio/worker';

import { workflowBundlerOptions } from '@shared/aliases';

import { type ActivityDeps, createActivities } from '../activities';

export interface WorkerDeps extends ActivityDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** Workflow code bundled beforehand (worker/workflow-bundle.ts); without it the worker bundles it in-process. */
  workflowBundle?: { code: string };
}

/**
 * Workflow task slots and pollers, sized for sales webhooks: each sale starts a delivery whose whole run is usually
 * one workflow task (its attempt is a local activity, which holds the task's slot while the receiver answers), and
 * that first task always comes from the normal queue, never the sticky one. With the SDK's defaults (40 slots, 10
 * pollers of which a fifth poll the normal queue) two polls took every new delivery, and deliveries queued behind
 * Temporal's round trips while the worker sat idle.
 */
const WORKFLOW_TASK_SLOTS = 100;
const WORKFLOW_TASK_POLLS = 20;
/** Half of the pollers on the normal queue: new deliveries arrive there, their rare retries on the sticky one. */
const NORMAL_QUEUE_POLL_SHARE = 0.5;
/** One per workflow task slot, so a slot never waits for a local activity slot. */
const LOCAL_ACTIVITY_SLOTS = WORKFLOW_TASK_SLOTS;

/** The worker for deployment workflows and their activities; `worker/main.ts` runs it, tests build their own. */
export function createDeploymentWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    ...(deps.workflowBundle
      ? { workflowBundle: deps.workflowBundle }
      : { workflowsPath: require.resolve('../workflows'), bundlerOptions: workflowBundlerOptions }),
    activities: createActivities(deps),
    maxConcurrentWorkflowTaskExecutions: WORKFLOW_TASK_SLOTS,
    maxConcurrentWorkflowTaskPolls: WORKFLOW_TASK_POLLS,
    nonStickyToStickyPollRatio: NORMAL_QUEUE_POLL_SHARE,
    maxConcurrentLocalActivityExecutions: LOCAL_ACTIVITY_SLOTS,
  });
}
