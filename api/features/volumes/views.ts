import type { VolumeRecord } from '@shared/volumes/types';

/** A volume as both the platform API and MCP show it. */
export const volumeView = (v: VolumeRecord) => ({
  id: v._id,
  name: v.name,
  sizeGb: v.sizeGb,
  projectId: v.projectId,
  status: v.status,
  error: v.error,
  createdAt: v.createdAt.toISOString(),
  updatedAt: v.updatedAt.toISOString(),
});

export type VolumeView = ReturnType<typeof volumeView>;
