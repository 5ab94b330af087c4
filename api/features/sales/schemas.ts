import { z } from 'zod';

import { email, queryInt } from '../../http/fields';

const currency = z.string().regex(/^[A-Za-z]{3}$/, 'a three-letter currency code');

export const SetWebhookRequest = z
  .object({
    url: z
      .url({ protocol: /^https?$/, error: 'an http:// or https:// URL (the endpoint that receives the events)' })
      .meta({ description: 'The http:// or https:// endpoint that receives the events (no other scheme)' }),
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
  .meta({
    id: 'CreateProductRequest',
    description: 'A SUBSCRIPTION product needs an interval.',
    if: { properties: { billingType: { const: 'SUBSCRIPTION' } }, required: ['billingType'] },
    then: { required: ['interval'] },
  });

export const RecordSaleRequest = z
  .object({
    productId: z.string().min(1),
    buyer: z.object({ email: email(), name: z.string().min(1).max(200) }).strict(),
    quantity: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).default(1),
    amount: z.number().nonnegative(),
    currency,
    salesCode: z.string().max(100).optional(),
    requestId: z.string().min(1).max(200).optional().meta({
      description:
        'Idempotency key: reusing it answers 409 DUPLICATE_REQUEST naming the first sale, and records no second sale',
    }),
  })
  .strict()
  .meta({ id: 'RecordSaleRequest' });

export const UpdateSubscriptionRequest = z
  .object({
    status: z.enum(['active', 'past_due', 'canceled']).optional(),
    currentPeriodEnd: z.iso.datetime({ offset: true }).optional(),
  })
  .strict()
  .refine((b) => b.status !== undefined || b.currentPeriodEnd !== undefined, 'give status, currentPeriodEnd or both')
  .meta({
    id: 'UpdateSubscriptionRequest',
    anyOf: [{ required: ['status'] }, { required: ['currentPeriodEnd'] }],
  });

export const IdParams = z.object({ id: z.string().min(1) });
export const SaleIdParams = z.object({ saleId: z.string().min(1) });
export const EventIdParams = z.object({ eventId: z.string().min(1) });

export const DeliveriesQuery = z
  .object({
    status: z.enum(['pending', 'delivered', 'failed']).optional(),
    type: z.enum(['sale.completed', 'sale.refunded', 'subscription.updated', 'test']).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();

export const SalesQuery = z
  .object({
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();

export const EntitlementsQuery = z.object({ email: email('an e-mail address') });

// Responses (the `data` of each route's {status: "success", data}); fields beyond these may be added later.

const iso = z.iso.datetime();

export const WebhookSaved = z
  .object({
    url: z.string(),
    secret: z.string().meta({ description: 'The signing secret; shown only here' }),
  })
  .meta({ id: 'WebhookSaved' });

export const WebhookSettings = z
  .object({
    url: z.string().nullable(),
    secret: z.string().nullable().meta({ description: 'Masked' }),
    previousSecretsValidUntil: z.array(iso),
  })
  .meta({ id: 'WebhookSettings' });

const outcome = z.string().meta({ description: 'What the attempt got (e.g. delivered, failed), or queued' });
const queuedMessage = z.string().optional().meta({ description: 'Set when outcome is queued' });

export const TestEventResult = z
  .object({ eventId: z.string(), outcome, message: queuedMessage })
  .meta({ id: 'TestEventResult' });

export const ApiKeyCreated = z
  .object({ apiKey: z.string().meta({ description: 'The seller API key; shown only here' }) })
  .meta({ id: 'ApiKeyCreated' });

export const Product = z
  .object({
    id: z.string(),
    name: z.string(),
    billingType: z.enum(['ONE_TIME', 'SUBSCRIPTION']),
    price: z.number(),
    currency: z.string(),
    interval: z.enum(['month', 'year']).nullable(),
  })
  .meta({ id: 'Product' });

export const ProductList = z
  .object({ products: z.array(Product) })
  .meta({ id: 'ProductList', description: 'Newest first; at most 200' });

export const SaleSummary = z
  .object({
    id: z.string(),
    productId: z.string(),
    productName: z.string(),
    buyer: z.object({ email: z.string(), name: z.string() }),
    quantity: z.number().int(),
    amount: z.number(),
    currency: z.string(),
    salesCode: z.string(),
    subscriptionId: z.string().nullable(),
    createdAt: iso,
    refundedAt: iso.nullable().meta({ description: 'Set once refunded; a refunded sale cannot be refunded again' }),
  })
  .meta({ id: 'SaleSummary' });

export const SaleList = z
  .object({ sales: z.array(SaleSummary), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'SaleList' });

export const SaleRecorded = z
  .object({ saleId: z.string(), eventId: z.string(), subscriptionId: z.string().optional() })
  .meta({ id: 'SaleRecorded' });

export const SaleRefunded = z.object({ saleId: z.string(), eventId: z.string() }).meta({ id: 'SaleRefunded' });

export const SubscriptionUpdated = z
  .object({ subscriptionId: z.string(), eventId: z.string().nullable() })
  .meta({ id: 'SubscriptionUpdated' });

const EVENT_TYPES = ['sale.completed', 'sale.refunded', 'subscription.updated', 'test'] as const;

export const DeliveryAttempt = z
  .object({
    number: z.number().int(),
    key: z.string(),
    trigger: z.enum(['auto', 'manual', 'test']),
    scheduledAt: iso,
    at: iso,
    durationMs: z.number(),
    responseStatus: z.number().int().nullable(),
    responseHeaders: z.record(z.string(), z.string()),
    responseBody: z.string(),
    errorClass: z.string().nullable(),
    error: z.string().nullable(),
    nextAttemptAt: iso.nullable(),
  })
  .meta({ id: 'DeliveryAttempt' });

const deliverySummary = {
  eventId: z.string(),
  type: z.enum(EVENT_TYPES),
  status: z.enum(['pending', 'delivered', 'failed']),
  createdAt: iso,
  attemptCount: z.number().int(),
  lastAttemptAt: iso.nullable(),
  lastResponseStatus: z.number().int().nullable().meta({
    description: "The HTTP status the latest attempt got; null before one, or when the endpoint didn't answer",
  }),
};

export const DeliveryList = z
  .object({
    deliveries: z.array(z.object(deliverySummary)),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .meta({ id: 'DeliveryList' });

export const Delivery = z
  .object({
    ...deliverySummary,
    body: z.record(z.string(), z.unknown()).meta({ description: 'The event exactly as sent' }),
    attempts: z.array(DeliveryAttempt),
  })
  .meta({ id: 'Delivery' });

export const ResendResult = z
  // A union rather than .nullable(): the generator renders a nullable $ref as allOf, which refuses null.
  .object({ outcome, attempt: z.union([DeliveryAttempt, z.null()]), message: queuedMessage })
  .meta({ id: 'ResendResult' });

/**
 * One entry of the entitlement lookup (GET /api/v1/entitlements and lookup_entitlements), exactly the interface's fields
 * (docs/architecture.md, "The interface we keep").
 */
export const Entitlement = z
  .object({
    type: z.enum(['one_time', 'subscription']),
    productId: z.string(),
    productName: z.string(),
    status: z.string(),
    saleId: z.string(),
    purchasedAt: z.iso.datetime(),
    subscriptionId: z.string().optional(),
    currentPeriodEnd: z.iso.datetime().optional(),
  })
  .meta({ id: 'Entitlement' });
export type Entitlement = z.infer<typeof Entitlement>;
