import type { Config } from './config';

/**
 * The spec's rate limits ("Limits"), in one table (DESIGN.md §6). The numbers here are the spec's; the
 * RATE_LIMIT_* variables override them (benchmarks, or an operator who sells a bigger plan). Each rule names what
 * it counts per, so a route cannot quietly count per organisation what the spec counts per key.
 *
 * Counters live in Redis (api/middleware/rate-limit.ts): never in MongoDB, whose embedded stand-in does not make a
 * read-modify-write atomic (DESIGN.md §2), so a counter there admits far more than its limit under concurrency.
 */
export interface LimitRule {
  /** Part of the Redis key; changing it resets every counter of the rule. */
  name: string;
  points: number;
  durationS: number;
  per: 'org' | 'token' | 'user' | 'key' | 'address';
}

export function limitRules(
  cfg: Pick<
    Config,
    | 'RATE_LIMIT_COMPAT_WRITES_PER_HOUR'
    | 'RATE_LIMIT_COMPAT_READS_PER_MIN'
    | 'RATE_LIMIT_PLATFORM_PER_15MIN'
    | 'RATE_LIMIT_DEPLOY_CREATE_PER_15MIN'
    | 'RATE_LIMIT_ENTITLEMENTS_PER_MIN'
    | 'RATE_LIMIT_MCP_PER_5MIN'
  >,
) {
  return {
    /** Compatibility API deploy and delete: 20 per hour per organisation. */
    compatWrites: { name: 'compat-writes', points: cfg.RATE_LIMIT_COMPAT_WRITES_PER_HOUR, durationS: 3600, per: 'org' },
    /** Zip uploads feed deploys: their own budget of the same size, so uploading never eats the deploys' share. */
    compatUploads: {
      name: 'compat-uploads',
      points: cfg.RATE_LIMIT_COMPAT_WRITES_PER_HOUR,
      durationS: 3600,
      per: 'org',
    },
    /** Compatibility API reads (status, logs, lists): 60 per minute per organisation. */
    compatReads: { name: 'compat-reads', points: cfg.RATE_LIMIT_COMPAT_READS_PER_MIN, durationS: 60, per: 'org' },
    /** Refused tokens on the compat origin, per client address: the reads' budget. */
    compatAnonymous: {
      name: 'compat-anonymous',
      points: cfg.RATE_LIMIT_COMPAT_READS_PER_MIN,
      durationS: 60,
      per: 'address',
    },
    /** Platform API: 100 per 15 minutes per client (token); refused tokens count per address against the same size. */
    platform: { name: 'platform', points: cfg.RATE_LIMIT_PLATFORM_PER_15MIN, durationS: 900, per: 'token' },
    /** Deployment creation, every origin: 10 per 15 minutes per user. */
    deployCreate: {
      name: 'deploy-create',
      points: cfg.RATE_LIMIT_DEPLOY_CREATE_PER_15MIN,
      durationS: 900,
      per: 'user',
    },
    /** Entitlement lookup: 120 per minute per seller API key (a rotated key starts a fresh budget). */
    entitlements: { name: 'entitlements', points: cfg.RATE_LIMIT_ENTITLEMENTS_PER_MIN, durationS: 60, per: 'key' },
    /** MCP: 300 requests per 5 minutes per token, over HTTP and stdio alike (api/mcp); refused tokens per address. */
    mcp: { name: 'mcp', points: cfg.RATE_LIMIT_MCP_PER_5MIN, durationS: 300, per: 'token' },
    /** Custom domain verification: 3 per 5 minutes per user (for the domains API; not mounted yet). */
    domainVerification: { name: 'domain-verification', points: 3, durationS: 300, per: 'user' },
  } satisfies Record<string, LimitRule>;
}

export type LimitName = keyof ReturnType<typeof limitRules>;
