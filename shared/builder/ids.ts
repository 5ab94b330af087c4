import { createHash } from 'node:crypto';

import { createStatusFeed } from '../deployments/status-feed';
import type { Redis } from '../redis';

/**
 * A UUID (RFC 9562 version 8, "custom") derived from `parts`: the same turn, retried, names the same messages and
 * checkpoint, and the same idempotencyKey on the same session names the same turn.
 */
export function derivedUuid(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\u0000')).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Wakes the streams tailing a turn's stored events as soon as one is written: the deployment status feed's
 * mechanism (a hint over Redis pub/sub; readers re-read the store and recheck on their own) on channels of its own.
 */
export const createTurnFeed = (redis: Redis, keyPrefix: string) =>
  createStatusFeed({ redis, keyPrefix: `${keyPrefix}builder-turn-events:`, recheckMs: 500 });

export type TurnFeed = ReturnType<typeof createTurnFeed>;
