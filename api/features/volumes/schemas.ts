import { z } from 'zod';

import { MAX_VOLUME_GB } from '@shared/volumes/mount';
import { VOLUME_STATUSES } from '@shared/volumes/types';

import { queryInt } from '../../http/fields';

/** As deployments name themselves: a DNS label, so a volume's name can appear in a host name or a path unquoted. */
const name = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'a DNS label: lowercase letters, digits and "-", at most 63 characters')
  .meta({ description: 'Unique in the organisation while the volume exists' });

/** Whole gigabytes (GiB): the filesystem is made of that size, and a write past it fails with "no space left". */
const sizeGb = z
  .number()
  .int('whole gigabytes')
  .min(1)
  .max(MAX_VOLUME_GB)
  .meta({ description: `Size in GB (whole GiB, 1 to ${MAX_VOLUME_GB}; the plan bounds the organisation's total)` });

export const CreateVolumeRequest = z
  .object({
    name,
    sizeGb,
    projectId: z
      .uuid('a project ID in UUID format')
      .optional()
      .meta({ description: 'The project it belongs to; judged by your role there. The organisation’s when absent' }),
  })
  .strict()
  .meta({ id: 'CreateVolumeRequest' });

export const VolumeIdParams = z.object({ id: z.uuid('a volume ID in UUID format') });

export const VolumeListQuery = z
  .object({
    projectId: z.uuid('a project ID in UUID format').optional(),
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, 1_000_000).default(0),
  })
  .strict();

export const Volume = z
  .object({
    id: z.uuid(),
    name: z.string(),
    sizeGb: z.number().int(),
    projectId: z.string().nullable(),
    status: z.enum(VOLUME_STATUSES).meta({
      description:
        'creating: its storage is being made; ready: it can be mounted; failed: its storage could not be made (see error; delete it and create another); deleting: its storage and data are being removed',
    }),
    error: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    attachedTo: z
      .object({ deploymentId: z.string(), deploymentName: z.string(), mountPath: z.string() })
      .nullable()
      .optional()
      .meta({
        description:
          'GET /volumes/{id} only: the deployment that mounts it and where (null when none does); a mounted volume cannot be deleted until it is detached',
      }),
  })
  .meta({ id: 'Volume' });

export const VolumeList = z
  .object({ volumes: Volume.array(), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'VolumeList' });
