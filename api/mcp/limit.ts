import { RateLimiterRes } from 'rate-limiter-flexible';

import { AppError } from '../../shared/errors';
import type { RateLimiters } from '../http/rate-limit';

/**
 * One point of a budget (shared/limits.ts) outside an HTTP response: a refusal is RATE_LIMIT_EXCEEDED with
 * retryAfterSeconds, which the MCP frame turns into an isError result with retryAfterS.
 */
export async function consumeLimit(limiter: RateLimiters[keyof RateLimiters], key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    const retryAfterS = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
    throw new AppError(
      'RATE_LIMIT_EXCEEDED',
      `Rate limit of ${limiter.points} requests per ${limiter.duration} s reached; retry after ${retryAfterS} s.`,
      { limit: limiter.points, windowSeconds: limiter.duration, retryAfterSeconds: retryAfterS },
    );
  }
}
