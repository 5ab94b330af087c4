import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  log,
  proxyActivities,
  setCurrentDetails,
  setHandler,
} from '@temporalio/workflow';

import type { VolumeActivities } from '@activities/volume';
import {
  deleteVolumeUpdate,
  VOLUME_FAILURES,
  volumeStatusQuery,
  type VolumeWorkflowInput,
} from '@shared/contracts/volume';
import type { VolumeStatus } from '@shared/volumes/types';

/** Record writes are quick; a database outage is waited out rather than leaving the record behind the storage. */
const { recordVolumeStatus, removeVolumeRecord } = proxyActivities<VolumeActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '10 seconds' },
});

/**
 * Storage steps take seconds whatever the size (the image is allocated, not written; mkfs fills its tables lazily).
 * They heartbeat every 5 s, so a worker killed mid-step is noticed within 30 s and the step runs again elsewhere, where
 * it finds whatever the first attempt made. Our own faults are not retried; anything else (the engine or the host
 * briefly unavailable) is, for about ten minutes.
 */
const { ensureVolumeStorage, removeVolumeStorage } = proxyActivities<VolumeActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { initialInterval: '2 seconds', maximumInterval: '1 minute', maximumAttempts: 15 },
});

const OURS: readonly string[] = Object.values(VOLUME_FAILURES);

/** Our fault's type and message, or a message of our own when the cause was not ours to word (logged instead). */
function failureOf(err: unknown, volumeId: string, fallback: string): { type?: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && OURS.includes(cause.type ?? '')) {
    return { type: cause.type ?? undefined, message: cause.message };
  }
  log.warn('a volume storage step failed after its retries', { volumeId, error: String(cause) });
  return { message: fallback };
}

const MADE_FALLBACK =
  "the volume's storage could not be made on the engine's host (the operator finds the cause in the worker's log); " +
  'delete the volume and create it again';
const REMOVED_FALLBACK =
  "the volume's storage could not be removed from the engine's host (the operator finds the cause in the worker's " +
  'log); delete it again in a few minutes';

/**
 * One persistent volume, for as long as it exists (docs/architecture.md, "Volumes: storage"): makes its storage on
 * the engine's host and says so in its record (`ready`, or `failed` with what to do), then waits for `deleteVolume`,
 * removes the storage and then the record, and answers. A delete the engine refuses because a container still mounts
 * the volume removes nothing: the status goes back to what it was and the update fails with the containers' names.
 */
export async function volumeWorkflow(input: VolumeWorkflowInput): Promise<void> {
  const { volumeId } = input;
  let status: VolumeStatus = 'creating';
  let error: string | null = null;
  /** Deletes asked for and not yet taken up by the loop below. */
  let deleteAsked = false;
  /** Rounds of deletion ended; each update waits for the round it arrived in. */
  let rounds = 0;
  let lastFailure: { type?: string; message: string } | undefined;
  let deleted = false;

  setHandler(volumeStatusQuery, () => ({ status, error }));
  setHandler(deleteVolumeUpdate, async (): Promise<{ deleted: true }> => {
    // Asked again while the workflow finishes: the answer is the same.
    if (deleted) return { deleted: true };
    deleteAsked = true;
    const round = rounds;
    await condition(() => rounds > round);
    if (lastFailure)
      throw ApplicationFailure.create({ type: lastFailure.type, message: lastFailure.message, nonRetryable: true });
    return { deleted: true };
  });

  /** The record first, then what the Temporal UI shows: both say the same once the write is done. */
  async function record(next: VolumeStatus, why: string | null): Promise<void> {
    await recordVolumeStatus({ volumeId, status: next, error: why });
    status = next;
    error = why;
    const lines = [`**${status}**`, `${input.sizeGb} GB volume \`${volumeId}\` of org \`${input.orgId}\``];
    if (why) lines.push(`\`\`\`\n${why.replaceAll('`', "'")}\n\`\`\``);
    setCurrentDetails(lines.join('\n\n'));
  }

  setCurrentDetails(`**creating**\n\n${input.sizeGb} GB volume \`${volumeId}\` of org \`${input.orgId}\``);
  const failedToMake = await ensureVolumeStorage({ volumeId, orgId: input.orgId, sizeGb: input.sizeGb }).then(
    () => null,
    (err: unknown) => failureOf(err, volumeId, MADE_FALLBACK).message,
  );
  await record(failedToMake ? 'failed' : 'ready', failedToMake);

  for (;;) {
    await condition(() => deleteAsked);
    deleteAsked = false;
    const before = { status, error };
    await record('deleting', null);
    try {
      await removeVolumeStorage({ volumeId });
      await removeVolumeRecord({ volumeId });
      lastFailure = undefined;
      deleted = true;
      rounds++;
      // Every update asked so far answers before the workflow ends (one that ends first fails them).
      await condition(allHandlersFinished);
      return;
    } catch (err) {
      lastFailure = failureOf(err, volumeId, REMOVED_FALLBACK);
      // Refused as in use: nothing was removed, so the volume is what it was. Otherwise part of it may be gone.
      if (lastFailure.type === VOLUME_FAILURES.inUse) await record(before.status, before.error);
      else await record('failed', lastFailure.message);
      // Updates that came during this round have its answer: none of them asks for another.
      deleteAsked = false;
      rounds++;
    }
  }
}
