/**
 * The volume workflow's contract: what the api needs to start a volume's workflow and ask it to delete the volume,
 * no workflow code (docs/architecture.md, "Layers and where code goes").
 */
import { defineQuery, defineUpdate } from '@temporalio/workflow';

import type { VolumeStatus } from '../volumes/types';

/** The exported function's name in workflows/volume/workflow.ts. */
export const VOLUME_WORKFLOW = 'volumeWorkflow';

/** One per volume, for as long as it exists. */
export const volumeWorkflowId = (volumeId: string) => `volume/${volumeId}`;

export interface VolumeWorkflowInput {
  volumeId: string;
  orgId: string;
  sizeGb: number;
}

/**
 * Removes the volume's storage and its record; answers once both are gone. The api checks the volume is attached to
 * nothing before it sends this.
 */
export const deleteVolumeUpdate = defineUpdate<{ deleted: true }>('deleteVolume');

/**
 * Failure types of the volume's storage steps the workflow tells apart. Each one's message is written for the volume's
 * owner and becomes the record's `error` (making) or the `deleteVolume` update's failure (removing).
 */
export const VOLUME_FAILURES = {
  /** The engine's host has no room to allocate the volume in full. */
  hostFull: 'VolumeHostFull',
  /** Storage with this ID exists with another size. */
  sizeMismatch: 'VolumeSizeMismatch',
  /** What is on the host or engine under this volume's name is another installation's, or an operator's. */
  notOurs: 'VolumeNotOurs',
  /** A container (running or stopped) still mounts the volume: nothing was removed. */
  inUse: 'VolumeInUse',
  /** An ID, size or org the storage rules refuse (shared/volumes/mount.ts). */
  invalid: 'VolumeInvalid',
} as const;

/** Where the volume's storage stands, as the workflow sees it. */
export const volumeStatusQuery = defineQuery<{ status: VolumeStatus; error: string | null }>('volumeStatus');
