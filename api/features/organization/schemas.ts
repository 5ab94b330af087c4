import { z } from 'zod';

import { Region } from '@shared/deployments/regions';
import { Provider } from '@shared/deployments/types';
import { SANDBOX_IDLE_BOUNDS_S, TOKEN_LIFETIME_CEILING_S } from '@shared/org-settings/types';
import { SECRET_ENVIRONMENTS } from '@shared/secrets/store';

import { text } from '../../http/fields';
import { MIN_TTL_S } from '../tokens/schemas';

const providers = z
  .array(Provider)
  .min(1)
  .max(Provider.options.length)
  .refine((l) => new Set(l).size === l.length, 'each provider once')
  .meta({ uniqueItems: true });

const fields = {
  name: text(100).meta({ description: 'The organisation’s name, as tokens and the CLI show it' }),
  defaultVaultEnvironment: z.enum(SECRET_ENVIRONMENTS).meta({
    description:
      'The environment of a secret created without one, and the vault a source deploy reads when it names no vaultEnvironment',
  }),
  defaultProvider: Provider.nullable().meta({
    description:
      'The provider of a deploy that names none (engine_local when null): one of the plan’s (GET /compat/providers), and among allowedProviders when those are set. A provider the plan offers but this server cannot run yet (available false there) is accepted, and deploys to it are refused with the reason',
  }),
  allowedProviders: providers.nullable().meta({
    description:
      'The providers new deployments may use, a subset of the plan’s (every provider of the plan when null); a deploy to another is refused with 403 PROVIDER_NOT_ALLOWED. Deployments that exist are not touched',
  }),
  defaultRegion: Region.nullable().meta({
    description:
      'The region of a deploy to the default provider that names none (the provider’s first region when null): one of the default provider’s regions (GET /compat/providers lists them), checked after the same request’s defaultProvider change. engine_local has one, this server’s own; the cloud providers have none on this server until their adapters are configured, so with one of them as default this is null. A deploy to another provider that names no region gets that provider’s first',
  }),
  tokenMaxLifetimeS: z
    .number()
    .int()
    .min(MIN_TTL_S)
    .max(TOKEN_LIFETIME_CEILING_S)
    .nullable()
    .meta({
      description: `Longest lifetime of a new access token, in seconds (${TOKEN_LIFETIME_CEILING_S} when null); a token asked for longer is refused with 400 naming the maximum. Tokens that exist keep their expiry`,
    }),
  sandboxIdleS: z.number().int().min(SANDBOX_IDLE_BOUNDS_S.min).max(SANDBOX_IDLE_BOUNDS_S.max).nullable().meta({
    description:
      'A builder sandbox nobody synced for this many seconds is stopped (the server’s SANDBOX_IDLE_S when null); applies to sandboxes started after the change',
  }),
};

export const UpdateOrganizationRequest = z
  .object({
    name: fields.name.optional(),
    defaultVaultEnvironment: fields.defaultVaultEnvironment.optional(),
    defaultProvider: fields.defaultProvider.optional(),
    allowedProviders: fields.allowedProviders.optional(),
    defaultRegion: fields.defaultRegion.optional(),
    tokenMaxLifetimeS: fields.tokenMaxLifetimeS.optional(),
    sandboxIdleS: fields.sandboxIdleS.optional(),
  })
  .strict()
  .meta({
    id: 'UpdateOrganizationRequest',
    description:
      'Only the fields given change; null sets a field back to the server’s default. An unknown field is refused (400, naming it).',
  });

const Seller = z
  .object({
    webhookUrl: z.string().nullable().meta({ description: 'PUT /platform/sales/webhook sets it' }),
    webhookSecretSet: z.boolean().meta({ description: 'Whether a signing secret exists; never its value' }),
    previousSecretsValidUntil: z.array(z.iso.datetime()).meta({
      description: 'Replaced signing secrets that still sign, until when',
    }),
    apiKey: z
      .object({
        createdAt: z.iso.datetime(),
        prefix: z.string().nullable().meta({
          description: 'The key’s first characters, to tell keys apart; null for keys made before prefixes were kept',
        }),
      })
      .nullable()
      .meta({ description: 'The seller API key (POST /platform/sales/api-keys), null when none; never its value' }),
  })
  .meta({
    id: 'SellerSettings',
    description: 'The seller settings, read from where they live (changed with the /platform/sales routes)',
  });

export const Organization = z
  .object({
    id: z.string(),
    plan: z.string(),
    // As stored: an organisation named by the operator's bootstrap is held to no request's rule.
    name: z.string().meta({ description: 'The organisation’s name, as tokens and the CLI show it' }),
    defaultVaultEnvironment: fields.defaultVaultEnvironment,
    defaultProvider: fields.defaultProvider,
    allowedProviders: fields.allowedProviders,
    defaultRegion: fields.defaultRegion,
    tokenMaxLifetimeS: fields.tokenMaxLifetimeS,
    sandboxIdleS: fields.sandboxIdleS,
    effective: z
      .object({
        defaultProvider: Provider,
        allowedProviders: z.array(Provider),
        defaultRegion: z.string().nullable().meta({
          description:
            'The region a deploy to the default provider gets when it names none; null when that provider has no region on this server',
        }),
        tokenMaxLifetimeS: z.number().int(),
        sandboxIdleS: z.number().int(),
      })
      .meta({ description: 'What applies now, with the server’s defaults in place of null' }),
    seller: Seller,
    version: z.number().int().meta({ description: 'How many changes the settings have seen (0: none)' }),
    updatedAt: z.iso.datetime().nullable(),
    updatedBy: z.string().nullable().meta({ description: 'The user who made the last change' }),
  })
  .meta({ id: 'Organization' });
