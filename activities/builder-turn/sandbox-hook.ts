import { Context } from '@temporalio/activity';
import type { Db } from 'mongodb';

import { createSandboxStore } from '@shared/builder/sandbox-store';
import { syncSession } from '@shared/builder/sandbox-sync';
import type { Config } from '@shared/config';
import { createOrgSettingsStore } from '@shared/org-settings/store';

import type { TurnActivityDeps } from './turn';

/** How long a turn waits for the preview after its checkpoint; a slower sync goes on and the turn ends. */
const TURN_SYNC_WAIT_MS = 40_000;

/**
 * The builder turn's `onCheckpoint`: a session with a sandbox shows the turn's checkpoint in its preview, and the
 * turn's stream says so with `sandbox.synced` (or that it is still syncing). It drives the sandbox workflow through its
 * contract (shared/builder/sandbox-sync.ts), as the api's sync route does.
 */
export function sandboxTurnHook(deps: {
  db: Db;
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'SANDBOX_IDLE_S'>;
}): TurnActivityDeps['onCheckpoint'] {
  const sandboxes = createSandboxStore(deps.db);
  const orgSettings = createOrgSettingsStore(deps.db);
  return async (turn, checkpoint, emit) => {
    const sandbox = await sandboxes.get(turn.orgId, turn.sessionId);
    if (!sandbox) return;
    const sync = syncSession(Context.current().client, deps.config, {
      sessionId: turn.sessionId,
      orgId: turn.orgId,
      checkpointId: checkpoint._id,
      seq: checkpoint.seq,
      idleS: (await orgSettings.of(turn.orgId)).sandboxIdleS,
    });
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      sync,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), TURN_SYNC_WAIT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    if (!outcome) {
      // The turn stopped waiting and says `syncing`; a failure the sync meets after that is the worker's to log.
      const log = Context.current().log;
      void sync.catch((err: unknown) =>
        log.warn('a sandbox sync the turn stopped waiting for failed', {
          turnId: turn.turnId,
          checkpointId: checkpoint._id,
          error: String(err),
        }),
      );
    }
    await emit('sandbox.synced', {
      checkpointId: checkpoint._id,
      previewUrl: sandbox.previewUrl,
      inSync: outcome?.status === 'running' && outcome.appliedCheckpointId === checkpoint._id,
      status: outcome?.status ?? 'syncing',
      action: outcome?.action ?? null,
      error: outcome?.error ?? null,
    });
  };
}
