import { z } from 'zod';

import { SECRET_ENVIRONMENTS } from '../../../shared/db/secrets-store';

export const CreateSecretRequest = z
  .object({
    name: z
      .string()
      .min(1)
      .max(128)
      .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, "_", "." and "-"'),
    value: z
      .string()
      .min(1)
      .max(64 * 1024)
      .meta({ description: 'Stored encrypted (AES-256-GCM); never returned' }),
    environment: z.enum(SECRET_ENVIRONMENTS).default('PRODUCTION'),
  })
  .strict()
  .meta({ id: 'CreateSecretRequest' });

export const SecretIdParams = z.object({ id: z.uuid('a secret ID in UUID format') });

export const SecretSummary = z
  .object({
    id: z.uuid().meta({ description: 'Pass as gitTokenSecretId to deploy a private repository' }),
    name: z.string(),
    environment: z.enum(SECRET_ENVIRONMENTS),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'SecretSummary' });
