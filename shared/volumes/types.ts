/**
 * A persistent volume: a filesystem of a fixed size that belongs to an organisation (and optionally a project),
 * outlives the deployments it is mounted in, and is removed only when asked. Its storage on the engine's host is
 * made and removed by its workflow (`volume/<id>`, shared/contracts/volume.ts); the record says where that stands.
 */
export const VOLUME_STATUSES = ['creating', 'ready', 'failed', 'deleting'] as const;
export type VolumeStatus = (typeof VOLUME_STATUSES)[number];

export interface VolumeRecord {
  _id: string;
  orgId: string;
  projectId: string | null;
  /** Unique in the organisation while the volume exists; free again once it is deleted. */
  name: string;
  sizeGb: number;
  status: VolumeStatus;
  /** Why the storage could not be made, when status is failed; null otherwise. */
  error: string | null;
  createdBy: string;
  createdAt: Date;
  updatedAt: Date;
}
