import Redis from 'ioredis';

/**
 * One Redis connection per process. Commands wait (bounded) for a reconnect instead of failing at once, so a
 * Redis restart costs a pause, not a burst of 500s; `enableOfflineQueue` keeps that pause short and ordered.
 */
export function createRedis(url: string): Redis {
  return new Redis(url, {
    lazyConnect: false,
    maxRetriesPerRequest: 3,
    connectTimeout: 5000,
    retryStrategy: (times) => Math.min(times * 200, 2000),
  });
}

export type { Redis };
