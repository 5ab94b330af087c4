import { z } from 'zod';

import { AI_ERROR_CODES } from '../ai/errors';
import { PROVIDER_KINDS } from '../ai/types';
import { DNS_NAME, integerRangePattern, IPV4, IPV6 } from '../patterns';
import { normalizeBaseUrl } from './base-url';
import type { AiProviderSummary } from './types';

/**
 * Request and response schemas of the AI provider routes: the single source of their types and of
 * the OpenAPI document. The key is write-only: it appears in requests and in no response.
 */

const name = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9 _.-]*$/, 'letters, digits, space, "_", "." and "-", starting with a letter or digit')
  .meta({ description: 'Unique in the organisation' });

// Model IDs are the provider's: `gpt-4o-mini`, `claude-sonnet-4-20250514`, `meta-llama/Llama-3.1-8B`, `llama3:8b`.
const model = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces, as the provider names the model');

/**
 * The URLs a baseUrl may be, as a pattern the document states: http(s), a host, an optional port and path; no
 * credentials, query or fragment. The last label of a name starts with a letter, since the URL parser reads a name
 * ending in a number as an IPv4 address (and refuses 999.1.1.1); a path is RFC 3986 characters.
 */
export const BASE_URL = new RegExp(
  `^https?://(?:(?:${DNS_NAME}\\.)?[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?|${IPV4}|\\[${IPV6}\\])` +
    `(?::${integerRangePattern(0, 65535)})?(?:/(?:[A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})*)*$`,
);

const baseUrl = z
  .string()
  .max(2048)
  .superRefine((raw, ctx) => {
    const error = normalizeBaseUrl(raw).error;
    if (error) ctx.addIssue({ code: 'custom', message: error });
  })
  .regex(BASE_URL, 'baseUrl must be https://host[:port][/path], the host a DNS name or an IP address')
  .transform((raw) => normalizeBaseUrl(raw).url!)
  .meta({
    description:
      'openai_compatible: the API prefix including its version, e.g. https://api.openai.com/v1; anthropic: the API root, e.g. https://api.anthropic.com. Loopback, private and other special-purpose addresses are refused unless the installation allows private providers.',
  });

const apiKey = z
  .string()
  .min(1)
  .max(4096)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
  .meta({ description: 'Write-only: stored encrypted (AES-256-GCM), never returned', writeOnly: true });

const models = z
  .array(model)
  .max(100)
  .refine((list) => new Set(list).size === list.length, 'each model once')
  .meta({
    description: 'Models a session may choose besides defaultModel; [] on update removes the list',
    uniqueItems: true,
  });

export const CreateAiProviderRequest = z
  .object({
    name,
    kind: z.enum(PROVIDER_KINDS),
    baseUrl,
    apiKey,
    defaultModel: model,
    models: models.optional(),
    enabled: z.boolean().default(true),
  })
  .strict()
  .meta({ id: 'CreateAiProviderRequest' });

export const UpdateAiProviderRequest = z
  .object({
    name: name.optional(),
    baseUrl: baseUrl.optional(),
    apiKey: apiKey.optional(),
    defaultModel: model.optional(),
    models: models.optional(),
    enabled: z.boolean().optional(),
  })
  .strict()
  .refine((o) => Object.keys(o).length > 0, 'name at least one field to change')
  .meta({
    id: 'UpdateAiProviderRequest',
    description: 'The kind is fixed at creation; create another provider',
    minProperties: 1,
  });

export const AiProviderIdParams = z.object({ id: z.uuid('an AI provider ID in UUID format') });

export const AiProviderView = z
  .object({
    id: z.uuid(),
    name: z.string(),
    kind: z.enum(PROVIDER_KINDS),
    baseUrl: z.string(),
    defaultModel: z.string(),
    models: z.array(z.string()),
    enabled: z.boolean(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'AiProvider', description: 'An AI provider; its API key is never returned' });

/** What a builder user sees of an enabled provider (GET /builder/providers): enough to choose a model. */
export const BuilderProviderView = AiProviderView.pick({
  id: true,
  name: true,
  kind: true,
  defaultModel: true,
  models: true,
}).meta({ id: 'BuilderProvider' });

export const AiProviderTestResult = z
  .discriminatedUnion('ok', [
    z.object({ ok: z.literal(true), models: z.array(z.string()).meta({ description: 'The provider’s model IDs' }) }),
    z.object({
      ok: z.literal(false),
      error: z.enum(AI_ERROR_CODES),
      message: z.string().meta({ description: 'What failed and what to do; never the key' }),
    }),
  ])
  .meta({ id: 'AiProviderTestResult' });

export function aiProviderView(p: AiProviderSummary): z.infer<typeof AiProviderView> {
  return {
    id: p._id,
    name: p.name,
    kind: p.kind,
    baseUrl: p.baseUrl,
    defaultModel: p.defaultModel,
    models: p.models ?? [],
    enabled: p.enabled,
    createdAt: p.createdAt.toISOString(),
    updatedAt: p.updatedAt.toISOString(),
  };
}
