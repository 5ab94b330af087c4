import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';

import { DEPLOYMENT_WORKFLOW, destroySignal } from '@shared/contracts/deployment';
import { deploymentNotFound } from '@shared/deployments/errors';
import type { Principal } from '@shared/identity/service';
import { currentRequestId } from '@shared/request-context';

import type { DeploymentServiceDeps } from './service.deps';
import type { DeploymentWorkflows } from './service.workflow';

/** How long a DELETE waits on Temporal; past it, the destroy intent already written is the reconciler's to finish. */
const DESTROY_SIGNAL_DEADLINE_MS = 10_000;

/** A deployment's destroy, as the api does its part of it. */
export function createDestroy(
  deps: Pick<DeploymentServiceDeps, 'store' | 'model' | 'feed' | 'temporal' | 'log'>,
  workflows: Pick<DeploymentWorkflows, 'workflowOptions'>,
) {
  const { store, temporal } = deps;

  return {
    /**
     * Durable in three steps, each safe to stop after: the intent is written (immutable), the record hidden, then
     * the workflow told with signalWithStart, so one whose start has not happened yet (a DELETE that overtook its
     * create) starts straight into its destroy and the create's own start finds it taken. Should the api stop, or
     * Temporal not answer, after the intent, the reconciler schedule hides the record and tells the workflow.
     */
    async destroy(principal: Principal, id: string, opts: { keepDatabases?: boolean } = {}): Promise<void> {
      const orgId = principal.org._id;
      const record = await store.get(orgId, id);
      if (!record) throw deploymentNotFound(id);
      const requestId = currentRequestId();
      await store.recordDestroyIntent({
        _id: id,
        orgId,
        requestedBy: principal.user._id,
        requestedAt: new Date(),
        ...(requestId ? { requestId } : {}),
        ...(opts.keepDatabases ? { keepDatabases: true } : {}),
      });
      // Before the hide, so a failure leaves the record live and the DELETE can be sent again: once hidden, a second
      // DELETE is a 404 and would never bury it. From here every status read is a 404, whatever a late write brings.
      await deps.model.bury(id);
      // False when a concurrent destroy hid it first: telling the workflow again changes nothing.
      await store.markDestroyed(orgId, id);
      // Followers read nothing until told; a lost announcement leaves them to the feed's recheck.
      await deps.feed.publish(id, 'destroyed').catch((err: unknown) => {
        deps.log.warn({ err, deploymentId: id }, 'destroy not announced to its followers; they will see it on recheck');
      });
      try {
        await temporal.withDeadline(Date.now() + DESTROY_SIGNAL_DEADLINE_MS, () =>
          temporal.workflow.signalWithStart(DEPLOYMENT_WORKFLOW, {
            ...workflows.workflowOptions(record, principal),
            signal: destroySignal,
            signalArgs: [],
          }),
        );
      } catch (err) {
        // A closed workflow already ran its destroy.
        if (err instanceof WorkflowExecutionAlreadyStartedError) return;
        deps.log.warn(
          { err, deploymentId: id },
          'destroy recorded and the deployment hidden, but its workflow was not told; the reconciler will finish it',
        );
      }
    },
  };
}
