import { Context } from '@temporalio/activity';

import {
  DATABASE_WORKFLOW,
  databaseWorkflowId,
  type DatabaseWorkflowInput,
  deleteDatabaseSignal,
} from '@shared/contracts/database';
import type { DatabaseStore } from '@shared/databases/store';
import type { DestroyIntent } from '@shared/deployments/types';

/**
 * A destroyed deployment's databases, once its containers are gone: each told to go (its workflow removes server,
 * storage, backups and record), or, when the destroy asked to keep them, made managed databases of the deployment's
 * project. Runs in the deployment workflow's destroy, so a crash anywhere is carried on by the next attempt.
 */
export function createDatabaseDestroyHook(deps: {
  store: Pick<DatabaseStore, 'ofDeploymentAny' | 'keepAsManaged'>;
  destroyIntent: (deploymentId: string) => Promise<Pick<DestroyIntent, 'keepDatabases'> | null>;
}) {
  return async (deploymentId: string): Promise<void> => {
    const databases = await deps.store.ofDeploymentAny(deploymentId);
    if (databases.length === 0) return;
    const keep = (await deps.destroyIntent(deploymentId))?.keepDatabases === true;
    const ctx = Context.current();
    for (const d of databases) {
      if (keep) {
        await deps.store.keepAsManaged(d._id, `${d.orgId}/managed/${d.name}-${d._id.slice(0, 8)}`);
        continue;
      }
      const input: DatabaseWorkflowInput = {
        databaseId: d._id,
        orgId: d.orgId,
        engine: d.engine,
        sizeGb: d.sizeGb,
        volumeId: d.volumeId,
      };
      // With start: a database whose workflow never started (or ended failed) is still removed, whole.
      await ctx.client.workflow.signalWithStart(DATABASE_WORKFLOW, {
        workflowId: databaseWorkflowId(d._id),
        taskQueue: ctx.info.taskQueue,
        args: [input],
        signal: deleteDatabaseSignal,
        signalArgs: [],
      });
    }
  };
}
