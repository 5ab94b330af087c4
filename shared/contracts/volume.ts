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

/** Where the volume's storage stands, as the workflow sees it. */
export const volumeStatusQuery = defineQuery<{ status: VolumeStatus; error: string | null }>('volumeStatus');
