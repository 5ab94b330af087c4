import { z } from 'zod';

const currency = z.string().regex(/^[A-Za-z]{3}$/, 'a three-letter currency code');

export const SetWebhookRequest = z
  .object({
    url: z.url({ protocol: /^https?$/ }).meta({ description: 'http(s) endpoint that receives the events' }),
    rotateImmediately: z
      .boolean()
      .default(false)
      .meta({ description: 'Stop signing with the previous secret at once' }),
  })
  .strict()
  .meta({ id: 'SetWebhookRequest' });

export const CreateProductRequest = z
  .object({
    name: z.string().min(1).max(200),
    billingType: z.enum(['ONE_TIME', 'SUBSCRIPTION']),
    price: z.number().nonnegative(),
    currency,
    interval: z.enum(['month', 'year']).optional(),
  })
  .strict()
  .meta({ id: 'CreateProductRequest' });

export const RecordSaleRequest = z
  .object({
    productId: z.string().min(1),
    buyer: z.object({ email: z.email(), name: z.string().min(1).max(200) }).strict(),
    quantity: z.number().int().min(1).default(1),
    amount: z.number().nonnegative(),
    currency,
    salesCode: z.string().max(100).optional(),
  })
  .strict()
  .meta({ id: 'RecordSaleRequest' });

export const UpdateSubscriptionRequest = z
  .object({
    status: z.enum(['active', 'past_due', 'canceled']).optional(),
    currentPeriodEnd: z.iso.datetime().optional(),
  })
  .strict()
  .refine((b) => b.status !== undefined || b.currentPeriodEnd !== undefined, 'give status, currentPeriodEnd or both')
  .meta({ id: 'UpdateSubscriptionRequest' });

export const IdParams = z.object({ id: z.string().min(1) });
export const SaleIdParams = z.object({ saleId: z.string().min(1) });
export const EventIdParams = z.object({ eventId: z.string().min(1) });

export const DeliveriesQuery = z
  .object({
    status: z.enum(['pending', 'delivered', 'failed']).optional(),
    type: z.enum(['sale.completed', 'sale.refunded', 'subscription.updated', 'test']).optional(),
    since: z.iso.datetime().optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    offset: z.coerce.number().int().min(0).default(0),
  })
  .strict();

export const EntitlementsQuery = z.object({ email: z.email('an e-mail address') });
