import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { MongoClient } from 'mongodb';
import { RateLimiterMongo, RateLimiterRes } from 'rate-limiter-flexible';

import type { Config } from '../../shared/config';
import { ensureIndexesWithRetry, retryLockBusy } from '../../shared/db/mongo';
import { AppError } from '../../shared/errors';

export interface LimitRule {
  name: string;
  points: number;
  durationS: number;
}

const COLLECTION = 'rate_limits';

/**
 * Counters live in MongoDB so every api process shares them. The library's own TTL index is left out
 * (FerretDB has none); expired windows are reset in place by the library on the next hit.
 */
export async function createRateLimiters<K extends string>(
  client: MongoClient,
  dbName: string,
  rules: Record<K, LimitRule>,
) {
  await ensureIndexesWithRetry('rate_limits.createIndexes', () =>
    client.db(dbName).collection(COLLECTION).createIndex({ key: 1 }, { unique: true }),
  );
  const limiters = {} as Record<K, RateLimiterMongo>;
  for (const [key, rule] of Object.entries(rules) as [K, LimitRule][]) {
    limiters[key] = new RateLimiterMongo({
      storeClient: client,
      dbName,
      tableName: COLLECTION,
      keyPrefix: rule.name,
      points: rule.points,
      duration: rule.durationS,
      disableIndexesCreation: true,
    });
  }
  return limiters;
}

function setHeaders(res: Response, limiter: RateLimiterMongo, r: RateLimiterRes) {
  res.set('X-RateLimit-Limit', String(limiter.points));
  res.set('X-RateLimit-Remaining', String(Math.max(0, r.remainingPoints)));
  res.set('X-RateLimit-Reset', String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
}

/** Consumes one point for the request's key; sets the X-RateLimit-* headers, and Retry-After on a 429. */
export async function consume(limiter: RateLimiterMongo, key: string, res: Response): Promise<void> {
  try {
    // One hot counter document per key: under load it is the write most likely to meet a busy lock.
    setHeaders(res, limiter, await retryLockBusy(() => limiter.consume(key)));
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    setHeaders(res, limiter, err);
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

export function rateLimit(limiter: RateLimiterMongo, keyOf: (req: Request) => string): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      await consume(limiter, keyOf(req), res);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** The spec's limits (DESIGN.md §6), from configuration so a plan or a benchmark can raise them. */
export function limitRules(
  cfg: Pick<
    Config,
    | 'RATE_LIMIT_COMPAT_WRITES_PER_HOUR'
    | 'RATE_LIMIT_COMPAT_READS_PER_MIN'
    | 'RATE_LIMIT_PLATFORM_PER_15MIN'
    | 'RATE_LIMIT_ENTITLEMENTS_PER_MIN'
  >,
) {
  return {
    compatWrites: { name: 'compat-writes', points: cfg.RATE_LIMIT_COMPAT_WRITES_PER_HOUR, durationS: 3600 },
    compatUploads: { name: 'compat-uploads', points: cfg.RATE_LIMIT_COMPAT_WRITES_PER_HOUR, durationS: 3600 },
    compatReads: { name: 'compat-reads', points: cfg.RATE_LIMIT_COMPAT_READS_PER_MIN, durationS: 60 },
    compatAnonymous: { name: 'compat-anonymous', points: cfg.RATE_LIMIT_COMPAT_READS_PER_MIN, durationS: 60 },
    platform: { name: 'platform', points: cfg.RATE_LIMIT_PLATFORM_PER_15MIN, durationS: 900 },
    entitlements: { name: 'entitlements', points: cfg.RATE_LIMIT_ENTITLEMENTS_PER_MIN, durationS: 60 },
  } satisfies Record<string, LimitRule>;
}

export type RateLimiters = Record<keyof ReturnType<typeof limitRules>, RateLimiterMongo>;
