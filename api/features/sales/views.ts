import type { z } from 'zod';

import type { AttemptRecord, EventRecord, ProductRecord, SaleRecord } from '@shared/sales/store';

import type { Delivery, DeliveryAttempt, DeliveryList, Product, SaleSummary } from './schemas';

/** One line of the deliveries log, as the REST list and the MCP tool show it. */
export const deliverySummary = (e: EventRecord): z.infer<typeof DeliveryList>['deliveries'][number] => ({
  eventId: e._id,
  type: e.type,
  status: e.status,
  createdAt: e.createdAt.toISOString(),
  attemptCount: e.attempts.length,
  lastAttemptAt: e.attempts.at(-1)?.at.toISOString() ?? null,
  lastResponseStatus: e.attempts.at(-1)?.responseStatus ?? null,
});

export const productView = (p: ProductRecord): z.infer<typeof Product> => ({
  id: p._id,
  name: p.name,
  billingType: p.billingType,
  price: p.price,
  currency: p.currency,
  interval: p.interval ?? null,
});

export const saleView = (s: SaleRecord & { productName: string }): z.infer<typeof SaleSummary> => ({
  id: s._id,
  productId: s.productId,
  productName: s.productName,
  buyer: { email: s.buyer.email, name: s.buyer.name },
  quantity: s.quantity,
  amount: s.amount,
  currency: s.currency,
  salesCode: s.salesCode,
  subscriptionId: s.subscriptionId ?? null,
  createdAt: s.createdAt.toISOString(),
  refundedAt: s.refundedAt?.toISOString() ?? null,
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
