import { z } from 'zod';

import { DNS_NAME, IPV6 } from '@shared/patterns';
import { SECRET_ENVIRONMENTS } from '@shared/secrets/store';

// DNS names as RFC 1123 spells them (IPv4 addresses among them), or IPv6 addresses; no wildcards: a token goes to
// hosts named one by one.
const HOST = new RegExp(`^(?:${DNS_NAME}|${IPV6})$`);

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
    environment: z.enum(SECRET_ENVIRONMENTS).optional().meta({
      description:
        "The vault environment; the organisation's defaultVaultEnvironment when absent (PRODUCTION unless GET /platform/organization says otherwise)",
    }),
    allowedHosts: z
      .array(
        z.string().max(253).regex(HOST, 'a host name such as github.com, or an IP address (no scheme, port or path)'),
      )
      .min(1)
      .max(20)
      .optional()
      .meta({
        description:
          'Hosts this secret may be sent to as a Git token (e.g. ["github.com"]); a Git deploy to any other host is refused. Required for gitTokenSecretId.',
      }),
  })
  .strict()
  .meta({ id: 'CreateSecretRequest' });

export const ReplaceSecretRequest = z.object({ value: CreateSecretRequest.shape.value }).strict().meta({
  id: 'ReplaceSecretRequest',
  description: 'A new value for the secret; its ID, name, environment and allowed hosts stay as they are',
});

export const SecretIdParams = z.object({ id: z.uuid('a secret ID in UUID format') });

export const SecretSummary = z
  .object({
    id: z.uuid().meta({ description: 'Pass as gitTokenSecretId to deploy a private repository' }),
    name: z.string(),
    environment: z.enum(SECRET_ENVIRONMENTS),
    allowedHosts: z.array(z.string()).optional().meta({ description: 'Hosts it may be sent to as a Git token' }),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime().nullable().meta({ description: 'When the value was last replaced; null if never' }),
  })
  .meta({ id: 'SecretSummary' });
