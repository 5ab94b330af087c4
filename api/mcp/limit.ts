import { RateLimiterRes } from 'rate-limiter-flexible';

import { type Limiter, limitRefusal } from '../http/rate-limit';

/**
 * One point of a budget (shared/limits.ts) outside an HTTP response: a refusal is the same RATE_LIMIT_EXCEEDED the
 * REST origins answer, which the MCP frame turns into an isError result with retryAfterS.
 */
export async function consumeLimit(limiter: Limiter, key: string): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (err) {
    if (!(err instanceof RateLimiterRes)) throw err;
    throw limitRefusal(limiter, key, err.msBeforeNext);
  }
}
