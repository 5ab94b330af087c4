import { z } from 'zod';

import { mountTargetError } from '@shared/volumes/mount';

/**
 * The bodies and answers of a deployment's volumes (routes.volumes.ts, and `volumes` of a platform deploy): which
 * volume, mounted where, under the same rules the worker holds a mount to (shared/volumes/mount.ts).
 */

/** At most this many volumes on one deployment: each is a mount and a storage check at every container start. */
export const MAX_DEPLOYMENT_VOLUMES = 8;

const volumeId = z.uuid('a volume ID in UUID format').meta({ description: 'The volume, from GET /platform/volumes' });

/** A path segment that is not "." or "..", with no "/" and no control character. */
const SEGMENT = String.raw`(?:[^/.\u0000-\u001f\u007f][^/\u0000-\u001f\u007f]*|\.[^/.\u0000-\u001f\u007f][^/\u0000-\u001f\u007f]*|\.\.[^/\u0000-\u001f\u007f]+)`;

/**
 * Absolute and normal (no ".", ".." or "//"), as a pattern the OpenAPI document states; what a pattern cannot say
 * without slow lookaheads (not in /proc, /sys or /dev; 4096 bytes of UTF-8) is checked after it.
 */
export const mountPath = z
  .string()
  .min(1)
  .max(4096)
  .regex(
    new RegExp(`^/(?:${SEGMENT}/)*${SEGMENT}/?$`),
    'an absolute path such as /data, with no ".", ".." or "//" parts',
  )
  .superRefine((p, ctx) => {
    const error = mountTargetError(p);
    if (error) ctx.addIssue({ code: 'custom', message: error });
  })
  .meta({
    description:
      'Where the volume appears inside the container: an absolute path, not / and not in /proc, /sys or /dev',
    example: '/data',
  });

export const VolumeMountRequest = z
  .object({ volumeId, mountPath })
  .strict()
  .meta({ id: 'VolumeMountRequest', description: 'A volume of the organisation, ready, mounted at mountPath' });

export const DeploymentVolumes = z
  .array(VolumeMountRequest)
  .max(MAX_DEPLOYMENT_VOLUMES)
  .meta({
    description: `Volumes the first release mounts (at most ${MAX_DEPLOYMENT_VOLUMES}, one per mountPath); a deployment with a volume runs one instance (replicas 1)`,
  });

export const VolumeAttachParams = z.object({
  id: z.uuid('a deployment ID in UUID format'),
  volumeId: z.uuid('a volume ID in UUID format'),
});

export const DeploymentVolume = z
  .object({
    volumeId: z.string(),
    name: z.string().nullable().meta({ description: "The volume's name; null only if its record is gone" }),
    mountPath: z.string(),
  })
  .meta({ id: 'DeploymentVolume' });

export const DeploymentVolumeList = z
  .object({ deploymentId: z.string(), volumes: z.array(DeploymentVolume) })
  .meta({ id: 'DeploymentVolumeList' });
