import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

import { AppError } from '@shared/errors';
import { type LimitName, type LimitRule, limitWords } from '@shared/limits';
import type { Redis } from '@shared/redis';

import { principalOf } from './auth';

/**
 * Counters live in Redis, where each hit is one Lua script (INCRBY with its expiry): atomic, so a burst of any size
 * admits exactly the limit, and shared by every api process. They were in MongoDB once; FerretDB's updates are not
 * atomic read-modify-writes and 130 concurrent requests all passed a limit of 100. No limit, quota or counter may
 * rest on a MongoDB read-modify-write: Redis, a unique index or an immutable insert instead.
 */
export function createRateLimiters(redis: Redis, keyPrefix: string, rules: Record<LimitName, LimitRule>) {
  const limiters = {} as RateLimiters;
  for (const [name, rule] of Object.entries(rules) as [LimitName, LimitRule][]) {
    const limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${keyPrefix}rl:${rule.name}`,
      points: rule.points,
      duration: rule.durationS,
    });
    limiters[name] = Object.assign(limiter, { rule });
  }
  return limiters;
}

/** A limiter that knows its rule, so its refusals can name the budget in words. */
export type Limiter = RateLimiterRedis & { readonly rule: LimitRule };
export type RateLimiters = Record<LimitName, Limiter>;

/** Keys a client address spends before anyone is known (a refused token or key) start with this. */
export const ADDRESS_KEY_PREFIX = 'ip:';

/**
 * The refusal of every limit, on every origin and over MCP: the budget in words and when to retry
 * ("10 deployment creations per user per 15 minutes; retry after 683 s"), with the numbers in details.
 */
export function limitRefusal(limiter: Limiter, key: string, msBeforeNext: number): AppError {
  const retryAfterS = Math.max(1, Math.ceil(msBeforeNext / 1000));
  const budget = limitWords(limiter.rule, limiter.points, key.startsWith(ADDRESS_KEY_PREFIX));
  return new AppError('RATE_LIMIT_EXCEEDED', `${budget}; retry after ${retryAfterS} s`, {
    limit: limiter.points,
    windowSeconds: limiter.duration,
    retryAfterSeconds: retryAfterS,
  });
}

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
export async function consume(limiter: Limiter, key: string, res: Response): Promise<void> {
  try {
    setHeaders(res, limiter, await limiter.consume(key));
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    setHeaders(res, limiter, err, true);
    const refusal = limitRefusal(limiter, key, err.msBeforeNext);
    res.set('Retry-After', String(refusal.details.retryAfterSeconds));
    throw refusal;
  }
}

export function rateLimit(limiter: Limiter, keyOf: (req: Request) => string): RequestHandler {
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
  address: (req: Request) => `${ADDRESS_KEY_PREFIX}${req.ip}`,
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
