import { type NativeConnection, Worker } from '@temporalio/worker';

import { workflowBundlerOptions } from '@shared/aliases';

import { type ActivityDeps, createActivities } from '../activities';

export interface WorkerDeps extends ActivityDeps {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
}

/** The worker for deployment workflows and their activities; `worker/main.ts` runs it, tests build their own. */
export function createDeploymentWorker(deps: WorkerDeps): Promise<Worker> {
  return Worker.create({
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue,
    workflowsPath: require.resolve('../workflows'),
    bundlerOptions: workflowBundlerOptions,
    activities: createActivities(deps),
  });
}
