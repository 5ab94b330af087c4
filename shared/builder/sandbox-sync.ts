import type { Client } from '@temporalio/client';

import type { Config } from '../config';
import {
  SANDBOX_WORKFLOW,
  type SandboxInput,
  sandboxWorkflowId,
  type SyncOutcome,
  syncUpdate,
} from '../contracts/sandbox';

// Not workflow code: the api's sync route and the builder turn's activity call this with their Temporal client.

/**
 * Asks the session's sandbox workflow (started if it is not running) to show this head, and waits for the answer.
 * Shared with the builder turn, which syncs after its checkpoint.
 */
export async function syncSession(
  temporal: Client,
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'SANDBOX_IDLE_S'>,
  /** `idleS`: the organisation's sandbox idle timeout (its settings), else the server's SANDBOX_IDLE_S. */
  req: { sessionId: string; orgId: string; checkpointId: string | null; seq: number; idleS?: number | null },
  /** The update's ID, so a caller that stops waiting can read its outcome later (getUpdateHandle). */
  syncId?: string,
): Promise<SyncOutcome> {
  // Read by a sandbox when its workflow starts: one running keeps the timeout it started with until it stops.
  const input: SandboxInput = { sessionId: req.sessionId, orgId: req.orgId, idleS: req.idleS ?? config.SANDBOX_IDLE_S };
  const workflowId = sandboxWorkflowId(req.sessionId);
  await temporal.workflow.start(SANDBOX_WORKFLOW, {
    workflowId,
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [input],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  return temporal.workflow.getHandle(workflowId).executeUpdate(syncUpdate, {
    args: [{ checkpointId: req.checkpointId, seq: req.seq }],
    ...(syncId ? { updateId: syncId } : {}),
  });
}
