import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

import { AppError } from '../../shared/errors';
import type { LimitName, LimitRule } from '../../shared/limits';
import type { Redis } from '../../shared/redis';
import { principalOf } from './auth';

/**
 * Counters live in Redis, where each hit is one Lua script (INCRBY with its expiry): atomic, so a burst of any size
 * admits exactly the limit, and shared by every api process. They were in MongoDB once; FerretDB's updates are not
 * atomic read-modify-writes and 130 concurrent requests all passed a limit of 100. No limit, quota or counter may
 * rest on a MongoDB read-modify-write (DESIGN.md §2): Redis, a unique index or an immutable insert instead.
 */
export function createRateLimiters(redis: Redis, keyPrefix: string, rules: Record<LimitName, LimitRule>) {
  const limiters = {} as Record<LimitName, RateLimiterRedis>;
  for (const [name, rule] of Object.entries(rules) as [LimitName, LimitRule][]) {
    limiters[name] = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}rl:${rule.name}`,
      points: rule.points,
      duration: rule.durationS,
    });
  }
  return limiters;
}

export type RateLimiters = Record<LimitName, RateLimiterRedis>;

/**
 * A request under two limits (compat deploy: writes per org, creations per user) reports the one closer to running
 * out; a refusal always reports the limit that refused.
 */
function setHeaders(res: Response, limiter: RateLimiterRedis, r: RateLimiterRes, refused = false) {
  const shown = res.get('X-RateLimit-Remaining');
  if (!refused && shown !== undefined && Number(shown) <= r.remainingPoints) return;
  res.set('X-RateLimit-Limit', String(limiter.points));
  res.set('X-RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
  res.set('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
}

/** Consumes one point for the request's key; sets the X-RateLimit-* headers, and Retry-After on a 429. */
export async function consume(limiter: RateLimiterRedis, key: string, res: Response): Promise<void> {
  try {
    setHeaders(res, limiter, await limiter.consume(key));
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    setHeaders(res, limiter, err, true);
    const retryAfterS = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    res.set('Retry-After', String(retryAfterS));
    throw new AppError(
      'RATE_LIMIT_EXCEEDED',
      `Rate limit of ${limiter.points} requests per ${limiter.duration} s reached; retry after ${retryAfterS} s.`,
      {
        limit: limiter.points,
        windowSeconds: limiter.duration,
        retryAfterSeconds: retryAfterS,
      },
    );
  }
}

export function rateLimit(limiter: RateLimiterRedis, keyOf: (req: Request) => string): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      await consume(limiter, keyOf(req), res);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/**
 * The key each budget counts per (shared/limits.ts `per`): one definition, so what a route consumes and what
 * GET /platform/tokens/current reports are the same counters.
 */
export const limitKey = {
  org: (req: Request) => principalOf(req).org._id,
  token: (req: Request) => `token:${principalOf(req).token._id}`,
  user: (req: Request) => `user:${principalOf(req).user._id}`,
};

/**
 * Deployment creation, 10 per 15 minutes per user whatever the origin: every route that creates a deployment
 * mounts this after authentication. It counts attempts, like every other limit, so a stream of refused bodies
 * cannot probe without limit either.
 */
export const deployCreateLimit = (limiters: Pick<RateLimiters, 'deployCreate'>): RequestHandler =>
  rateLimit(limiters.deployCreate, limitKey.user);

/**
 * What is left of one limit for one key, as callers see it (tokens/current, MCP whoami): read with get(), which
 * spends no point.
 */
export async function budgetOf<P extends string>(limiter: RateLimiterRedis, key: string, per: P) {
  const r = await limiter.get(key);
  return {
    limit: limiter.points,
    remaining: Math.max(0, limiter.points - (r?.consumedPoints ?? 0)),
    windowSeconds: limiter.duration,
    per,
    resetAt: r ? new Date(Date.now() + r.msBeforeNext).toISOString() : null,
  };
}
