import { ApplicationFailure, Context } from '@temporalio/activity';

import { VOLUME_FAILURES } from '@shared/contracts/volume';
import { type StorageLedger, volumeFact } from '@shared/usage/storage-ledger';
import type { VolumeStore } from '@shared/volumes/store';
import type { VolumeStatus } from '@shared/volumes/types';

import { type EngineVolumes, VolumeStorageError } from '../providers/engine-volumes';
import { scheduledAt } from '../scheduled-at';

/** How often a storage step tells Temporal it is alive: a worker killed mid-step is noticed within the timeout. */
const HEARTBEAT_MS = 5_000;

/**
 * A storage step, heartbeating while it runs, with our faults as non-retryable failures (retrying changes none of
 * them) and anything else thrown as it is, for the retry policy.
 */
async function storageStep<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_MS);
  try {
    return await work();
  } catch (err) {
    if (err instanceof VolumeStorageError)
      throw ApplicationFailure.create({ type: VOLUME_FAILURES[err.fault], message: err.message, nonRetryable: true });
    if (err instanceof TypeError)
      throw ApplicationFailure.create({ type: VOLUME_FAILURES.invalid, message: err.message, nonRetryable: true });
    throw err;
  } finally {
    clearInterval(beat);
  }
}

/**
 * The volume workflow's activities: its storage on the engine's host, its record, and the storage ledger's entries
 * (its start once ready, its end once the storage is removed). Each may run again safely.
 */
export function createVolumeActivities(deps: {
  storage: Pick<EngineVolumes, 'ensure' | 'remove'>;
  store: Pick<VolumeStore, 'setStatus' | 'remove' | 'getAny'>;
  ledger: Pick<StorageLedger, 'started' | 'ended'>;
}) {
  return {
    ensureVolumeStorage: (input: { volumeId: string; orgId: string; sizeGb: number }) =>
      storageStep(() => deps.storage.ensure(input)),

    removeVolumeStorage: (input: { volumeId: string }) => storageStep(() => deps.storage.remove(input.volumeId)),

    async recordVolumeStatus(input: { volumeId: string; status: VolumeStatus; error: string | null }): Promise<void> {
      await deps.store.setStatus(input.volumeId, input.status, input.error);
      if (input.status !== 'ready') return;
      // Ready again after a refused delete: the start already written stands.
      const v = await deps.store.getAny(input.volumeId);
      if (v) await deps.ledger.started(volumeFact(v, scheduledAt()));
    },

    /** Runs once the storage is removed: the ledger's end first, so a retry after the record is gone misses nothing. */
    async removeVolumeRecord(input: { volumeId: string }): Promise<void> {
      const v = await deps.store.getAny(input.volumeId);
      if (v) await deps.ledger.ended(volumeFact(v, scheduledAt()));
      await deps.store.remove(input.volumeId);
    },
  };
}

export type VolumeActivities = ReturnType<typeof createVolumeActivities>;
