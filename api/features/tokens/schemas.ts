import { z } from 'zod';

import { integerRangePattern } from '@shared/patterns';
import { ORG_ROLES, PERMISSIONS } from '@shared/permissions';

const MAX_TTL_S = 365 * 86400;
/** A token's lifetime when the request names none. */
export const DEFAULT_TTL_S = 90 * 86400;
/** A shorter token would expire before a caller could use it ("0s" used to issue one already expired). */
export const MIN_TTL_S = 60;

const UNITS = { s: 1, m: 60, h: 3600, d: 86400 } as const;

/**
 * "90d", "12h", "30m" or "45s" within the bounds, each unit's range spelled out, so the document's pattern refuses
 * what the server refuses ("59s", "366d") and nothing else; no leading zero.
 */
const DURATION = new RegExp(
  `^(?:${Object.entries(UNITS)
    .map(([unit, s]) => `${integerRangePattern(Math.ceil(MIN_TTL_S / s), Math.floor(MAX_TTL_S / s))}${unit}`)
    .join('|')})$`,
);

/** A number of seconds or a duration such as "90d". */
const Duration = z
  .union([
    z
      .number()
      .int()
      .min(MIN_TTL_S, `at least ${MIN_TTL_S} seconds; a shorter token expires before use`)
      .max(MAX_TTL_S, 'at most 365 days'),
    z.string().regex(DURATION, `a duration such as 30m, 12h or 90d: at least ${MIN_TTL_S} seconds, at most 365 days`),
  ])
  .transform((v) => (typeof v === 'number' ? v : Number(v.slice(0, -1)) * UNITS[v.slice(-1) as keyof typeof UNITS]));

export const CreateTokenRequest = z
  .object({
    name: z.string().min(1).max(100),
    scopes: z.array(z.enum(PERMISSIONS)).min(1),
    expiresIn: Duration.optional().meta({
      description: `Lifetime: seconds, or e.g. "1h", "30d"; at least ${MIN_TTL_S} seconds, at most 365 days, and at most the organisation's tokenMaxLifetimeS (GET /platform/organization). ${DEFAULT_TTL_S / 86400} days when absent, or that maximum when it is shorter`,
    }),
  })
  .strict()
  .meta({ id: 'CreateTokenRequest' });

export const TokenIdParams = z.object({ id: z.uuid('a token ID in UUID format') });

export const TokenSummary = z
  .object({
    id: z.uuid(),
    name: z.string(),
    scopes: z.array(z.string()),
    expiresAt: z.iso.datetime(),
    createdAt: z.iso.datetime(),
    lastUsedAt: z.iso.datetime().nullable(),
    revokedAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'TokenSummary' });

const Budget = z.object({
  limit: z.number().int(),
  remaining: z.number().int(),
  windowSeconds: z.number().int(),
  per: z.enum(['org', 'token', 'user']),
  resetAt: z.iso.datetime().nullable().meta({ description: 'When the window resets; null when nothing is spent' }),
});

export const CurrentToken = z
  .object({
    id: z.uuid(),
    name: z.string(),
    scopes: z.array(z.string()),
    expiresAt: z.iso.datetime(),
    user: z.object({ id: z.string(), email: z.string(), role: z.enum(ORG_ROLES) }),
    org: z.object({ id: z.string(), name: z.string(), plan: z.string() }),
    permissions: z.array(z.enum(PERMISSIONS)).meta({
      description:
        'What this token may do across the organisation: its scopes that the org role grants. Inside a project the project role narrows it, unless actsAsProjectAdmin',
    }),
    actsAsProjectAdmin: z.boolean().meta({ description: 'Org owners and admins act as admins of every project' }),
    limits: z.record(z.string(), Budget).meta({
      description: 'Remaining rate-limit budgets (platform includes this request); reading them spends nothing else',
    }),
  })
  .meta({ id: 'CurrentToken' });
