import type { Config } from './config';

/**
 * The rate limits, in one table. The numbers here are the defaults; the RATE_LIMIT_* variables override them
 * (benchmarks, or an operator who sells a bigger plan). Each rule names what it counts per, so a route cannot quietly
 * count per organisation what is meant per key, and what one point is in words, so every refusal says which budget
 * ran out ("10 deployment creations per user per 15 minutes") rather than bare numbers.
 *
 * Counters live in Redis (api/http/rate-limit.ts): never in MongoDB, whose embedded stand-in does not make a
 * read-modify-write atomic, so a counter there admits far more than its limit under concurrency.
 */
export interface LimitRule {
  /** Part of the Redis key; changing it resets every counter of the rule. */
  name: string;
  points: number;
  durationS: number;
  per: LimitPer;
  /** What one point counts, singular then plural. */
  counts: Words;
  /**
   * What a point counts when a client address spends it because no caller is known yet (a missing, refused or
   * wrong token or key): the rule's own budget, counted per address.
   */
  refused?: Words;
}

export type LimitPer = 'org' | 'token' | 'user' | 'key' | 'address';
type Words = readonly [one: string, many: string];

export function limitRules(
  cfg: Pick<
    Config,
    | 'RATE_LIMIT_COMPAT_WRITES_PER_HOUR'
    | 'RATE_LIMIT_COMPAT_READS_PER_MIN'
    | 'RATE_LIMIT_PLATFORM_PER_15MIN'
    | 'RATE_LIMIT_PLATFORM_REFUSED_PER_15MIN'
    | 'RATE_LIMIT_DEPLOY_CREATE_PER_15MIN'
    | 'RATE_LIMIT_ENTITLEMENTS_PER_MIN'
    | 'RATE_LIMIT_MCP_PER_5MIN'
    | 'RATE_LIMIT_HOOKS_PER_MIN'
    | 'RATE_LIMIT_DOMAIN_VERIFY_PER_5MIN'
  >,
) {
  return {
    /** Compatibility API deploy and delete: 20 per hour per organisation. */
    compatWrites: {
      name: 'compat-writes',
      points: cfg.RATE_LIMIT_COMPAT_WRITES_PER_HOUR,
      durationS: 3600,
      per: 'org',
      counts: ['compatibility API deploy or delete', 'compatibility API deploys and deletes'],
    },
    /** Zip uploads feed deploys: their own budget of the same size, so uploading never eats the deploys' share. */
    compatUploads: {
      name: 'compat-uploads',
      points: cfg.RATE_LIMIT_COMPAT_WRITES_PER_HOUR,
      durationS: 3600,
      per: 'org',
      counts: ['zip upload', 'zip uploads'],
    },
    /** Compatibility API reads (status, logs, lists): 60 per minute per organisation. */
    compatReads: {
      name: 'compat-reads',
      points: cfg.RATE_LIMIT_COMPAT_READS_PER_MIN,
      durationS: 60,
      per: 'org',
      counts: ['compatibility API read', 'compatibility API reads'],
    },
    /** Refused tokens on the compat origin, per client address: the reads' budget. */
    compatAnonymous: {
      name: 'compat-anonymous',
      points: cfg.RATE_LIMIT_COMPAT_READS_PER_MIN,
      durationS: 60,
      per: 'address',
      counts: [
        'compatibility API request with a missing or refused token',
        'compatibility API requests with a missing or refused token',
      ],
    },
    /** Platform API: 100 per 15 minutes per client (token); refused tokens count per address (platformRefused). */
    platform: {
      name: 'platform',
      points: cfg.RATE_LIMIT_PLATFORM_PER_15MIN,
      durationS: 900,
      per: 'token',
      counts: ['platform API request', 'platform API requests'],
    },
    /** Refused or missing platform tokens, per client address: the platform budget's size unless set on its own. */
    platformRefused: {
      name: 'platform-refused',
      points: cfg.RATE_LIMIT_PLATFORM_REFUSED_PER_15MIN ?? cfg.RATE_LIMIT_PLATFORM_PER_15MIN,
      durationS: 900,
      per: 'address',
      counts: [
        'platform API request with a missing or refused token',
        'platform API requests with a missing or refused token',
      ],
    },
    /** Deployment creation, every origin: 10 per 15 minutes per user. */
    deployCreate: {
      name: 'deploy-create',
      points: cfg.RATE_LIMIT_DEPLOY_CREATE_PER_15MIN,
      durationS: 900,
      per: 'user',
      counts: ['deployment creation', 'deployment creations'],
    },
    /** Entitlement lookup: 120 per minute per seller API key (a rotated key starts a fresh budget). */
    entitlements: {
      name: 'entitlements',
      points: cfg.RATE_LIMIT_ENTITLEMENTS_PER_MIN,
      durationS: 60,
      per: 'key',
      counts: ['entitlement lookup', 'entitlement lookups'],
      refused: [
        'entitlement lookup with a missing or wrong API key',
        'entitlement lookups with a missing or wrong API key',
      ],
    },
    /** MCP: 300 requests per 5 minutes per token, over HTTP and stdio alike (api/mcp); refused tokens per address. */
    mcp: {
      name: 'mcp',
      points: cfg.RATE_LIMIT_MCP_PER_5MIN,
      durationS: 300,
      per: 'token',
      counts: ['MCP request', 'MCP requests'],
      refused: ['MCP request with a missing or refused token', 'MCP requests with a missing or refused token'],
    },
    /** Git webhook deliveries, signed or not, per client address: no caller is known before the signature is checked. */
    hooks: {
      name: 'hooks',
      points: cfg.RATE_LIMIT_HOOKS_PER_MIN,
      durationS: 60,
      per: 'address',
      counts: ['webhook delivery', 'webhook deliveries'],
    },
    /** Custom domain verification: 3 per 5 minutes per user (POST /platform/domains/{id}/verify, MCP verify_domain). */
    domainVerification: {
      name: 'domain-verification',
      points: cfg.RATE_LIMIT_DOMAIN_VERIFY_PER_5MIN,
      durationS: 300,
      per: 'user',
      counts: ['domain verification', 'domain verifications'],
    },
  } satisfies Record<string, LimitRule>;
}

export type LimitName = keyof ReturnType<typeof limitRules>;

const PER_WORDS: Record<LimitPer, string> = {
  org: 'organisation',
  token: 'token',
  user: 'user',
  key: 'API key',
  address: 'client address',
};

/** "hour", "15 minutes", "minute", "90 seconds": a window as a person says it. */
export function windowWords(durationS: number): string {
  const [size, unit] =
    durationS % 3600 === 0
      ? [durationS / 3600, 'hour']
      : durationS % 60 === 0
        ? [durationS / 60, 'minute']
        : [durationS, 'second'];
  return size === 1 ? unit : `${size} ${unit}s`;
}

/**
 * A budget in words: "10 deployment creations per user per 15 minutes". `byAddress` is the budget a client address
 * spends before anyone is known (a refused token), which counts per address whatever the rule counts per.
 */
export function limitWords(
  rule: Pick<LimitRule, 'per' | 'counts' | 'refused' | 'durationS'>,
  points: number,
  byAddress = false,
): string {
  const [one, many] = byAddress ? (rule.refused ?? rule.counts) : rule.counts;
  const per = PER_WORDS[byAddress ? 'address' : rule.per];
  return `${points} ${points === 1 ? one : many} per ${per} per ${windowWords(rule.durationS)}`;
}
