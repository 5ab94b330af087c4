import type { z } from 'zod';

import type { AttemptRecord, EventRecord } from '@shared/sales/store';

import type { Delivery, DeliveryAttempt, DeliveryList } from './schemas';

/** One line of the deliveries log, as the REST list and the MCP tool show it. */
export const deliverySummary = (e: EventRecord): z.infer<typeof DeliveryList>['deliveries'][number] => ({
  eventId: e._id,
  type: e.type,
  status: e.status,
  createdAt: e.createdAt.toISOString(),
  attemptCount: e.attempts.length,
  lastAttemptAt: e.attempts.at(-1)?.at.toISOString() ?? null,
});

export const attemptView = (a: AttemptRecord): z.infer<typeof DeliveryAttempt> => ({
  ...a,
  scheduledAt: a.scheduledAt.toISOString(),
  at: a.at.toISOString(),
  nextAttemptAt: a.nextAttemptAt?.toISOString() ?? null,
});

/** One event with the body exactly as sent and every attempt. */
export const deliveryView = (e: EventRecord): z.infer<typeof Delivery> => ({
  ...deliverySummary(e),
  body: JSON.parse(e.body) as Record<string, unknown>,
  attempts: e.attempts.map(attemptView),
});
