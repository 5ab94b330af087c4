import { createEventDelivery, type SalesDeps } from './delivery';
import { createEntitlementService } from './service.entitlements';
import { createRecordsService } from './service.records';
import { createWebhookService } from './service.webhooks';

/**
 * The sales feature's behaviour, no HTTP: the checkout's records (service.records.ts), the seller's webhook and its
 * deliveries (service.webhooks.ts), the entitlement lookup and its API key (service.entitlements.ts), all emitting
 * and delivering events through one outbox (delivery.ts).
 */
export function createSalesService(deps: SalesDeps) {
  const delivery = createEventDelivery(deps);
  return {
    ...createRecordsService(deps, delivery),
    ...createWebhookService(deps, delivery),
    ...createEntitlementService(deps),
  };
}

export type SalesService = ReturnType<typeof createSalesService>;
