import {
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';

import type { SandboxActivities } from '@activities/sandbox';
import { type SandboxInput, type SyncOutcome, type SyncRequest, syncUpdate } from '@shared/contracts/sandbox';

// Copy, reinstall and probe: bounded by the install and readiness timeouts the activity applies itself.
const { applySandbox } = proxyActivities<SandboxActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 3 },
});

const { stopSandbox, markSandboxFailed } = proxyActivities<SandboxActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/** Syncs one run carries out before it continues as new, so its history stays small. */
const SYNCS_PER_RUN = 100;

/**
 * The live preview of a builder session (docs/architecture.md, "AI builder"), one command at a time: each `sync` update
 * names the head it wants shown; the loop applies the newest head asked for (requests that arrive during a sync are
 * answered by the next one, whatever their number), and every update answers with the sync that covered it. A sandbox
 * nobody synced for `idleS` is stopped, and the next sync makes it anew.
 */
export async function sandboxWorkflow(input: SandboxInput): Promise<void> {
  let wanted: SyncRequest | undefined;
  let asked = 0;
  let served = 0;
  let last: SyncOutcome | undefined;
  let stopped = false;

  setHandler(syncUpdate, async (req) => {
    if (!wanted || req.seq >= wanted.seq) wanted = req;
    const ticket = ++asked;
    await condition(() => served >= ticket);
    return last!;
  });

  for (let runs = 0; ; runs++) {
    const busy = await condition(() => asked > served, `${input.idleS} seconds`);
    if (!busy) {
      if (!stopped) await stopSandbox({ sessionId: input.sessionId, orgId: input.orgId });
      stopped = true;
      await condition(() => asked > served);
    }
    const taking = asked;
    const req = wanted!;
    try {
      last = await applySandbox({ sessionId: input.sessionId, orgId: input.orgId, checkpointId: req.checkpointId });
    } catch (err) {
      // Retries spent on our side (engine or storage unreachable): the update answers, the session is not stuck, and
      // the cause stays in the worker's log (the session is told only that it was ours).
      log.warn('a sandbox sync failed after its retries', { sessionId: input.sessionId, error: String(err) });
      const message = 'the sandbox could not be synced on our side; sync again in a moment';
      await markSandboxFailed({ sessionId: input.sessionId, message }).catch((recordErr: unknown) =>
        // The update's answer below carries the failure either way; the record keeps its last status meanwhile.
        log.warn('a failed sandbox sync was not recorded', { sessionId: input.sessionId, error: String(recordErr) }),
      );
      last = {
        status: 'failed',
        action: 'none',
        appliedCheckpointId: null,
        copied: 0,
        deleted: 0,
        containerId: null,
        error: message,
      };
    }
    stopped = false;
    served = taking;
    if (runs >= SYNCS_PER_RUN || workflowInfo().continueAsNewSuggested) {
      // Every update taken so far is answered; later ones go to the next run.
      await condition(() => asked === served && allHandlersFinished());
      await continueAsNew<typeof sandboxWorkflow>(input);
    }
  }
}
