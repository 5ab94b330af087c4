import { getExternalWorkflowHandle, patched, proxyActivities } from '@temporalio/workflow';

import type { DeploymentActivities } from '@activities/deployment';
import type { ReconcileActivities } from '@activities/reconcile';
import { deploymentWorkflowId, destroySignal } from '@shared/contracts/deployment';
import type { ReconcileReport } from '@shared/contracts/reconcile';

const { planReconcile, removeOrphans, restoreRoutes } = proxyActivities<ReconcileActivities>({
  startToCloseTimeout: '10 minutes',
  retry: { maximumInterval: '1 minute', maximumAttempts: 5 },
});

/** Runs recorded before the router was reconciled too replay without its activity. */
const RESTORES_ROUTES = 'reconcile-restores-routes';
/** And runs from before cloud providers without theirs. */
const RECONCILES_CLOUDS = 'reconcile-clouds';

// Listing every account's resources and removing a leaked deployment's may take a while per cloud.
const { cloudReconcile } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '5 minutes',
  retry: { maximumInterval: '1 minute', maximumAttempts: 3 },
});

/** Signals per run, so one run's history stays small; the rest are found again by the next run. */
const MAX_SIGNALS = 200;

/**
 * Run by the reconcile schedule: finishes half-done destroys, tells each destroyed deployment's workflow (one
 * that never heard its destroy would keep deploying or holding), removes what is left on the engine, then puts
 * back the routes and upstream files the edge router lost for deployments that run or are stopped, and removes what
 * the clouds still hold of deployments that are gone.
 */
export async function reconcileWorkflow(): Promise<ReconcileReport> {
  const plan = await planReconcile();
  let signalled = 0;
  await Promise.all(
    plan.destroyed.slice(0, MAX_SIGNALS).map(async (id) => {
      try {
        await getExternalWorkflowHandle(deploymentWorkflowId(id)).signal(destroySignal);
        signalled++;
      } catch {
        // Finished already, or never started: there is nothing to tell, and the removal below still runs.
      }
    }),
  );
  const counts = await removeOrphans();
  const restored = patched(RESTORES_ROUTES) ? { restored: await restoreRoutes() } : {};
  const clouds = patched(RECONCILES_CLOUDS) ? { clouds: await cloudReconcile() } : {};
  return { ...counts, hidden: plan.hidden.length, signalled, ...restored, ...clouds };
}
