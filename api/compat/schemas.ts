import { z } from 'zod';

import { DeploymentStatus, Provider } from '../../shared/deployments';

export const DeployRequest = z
  .object({
    image: z
      .string()
      .min(1)
      .max(512)
      .regex(/^[^\s]+$/, 'an image reference without spaces'),
    name: z
      .string()
      .max(63)
      .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'a DNS label: lowercase letters, digits and "-", at most 63'),
    port: z.number().int().min(1).max(65535).default(8080),
    envVars: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'), z.string())
      .default({}),
    requestId: z.string().min(1).max(200).optional(),
    provider: Provider.default('engine_local'),
  })
  .strict();

export const DeploymentIdParams = z.object({ id: z.uuid('a deployment ID in UUID format') });

export const ListQuery = z
  .object({
    status: DeploymentStatus.optional(),
    provider: Provider.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    offset: z.coerce.number().int().min(0).default(0),
  })
  .strict();
