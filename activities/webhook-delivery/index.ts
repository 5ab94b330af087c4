import type { SalesStore } from '@shared/sales/store';

import { createAttemptActivities } from './attempts';
import { createOutboxActivities } from './outbox';

/**
 * The webhook workflows' activities (workflows/webhook-delivery): one signed attempt and its record for the
 * delivery and resend workflows, the outbox's reads for the sweep.
 */
export function createWebhookDeliveryActivities(deps: { store: SalesStore; allowPrivateTargets: boolean }) {
  return {
    ...createAttemptActivities(deps),
    ...createOutboxActivities({ store: deps.store }),
  };
}

export type WebhookDeliveryActivities = ReturnType<typeof createWebhookDeliveryActivities>;
