import { z } from 'zod';

import { defineTool, READ, type ToolDef, WRITE } from '../../mcp/tool';
import type { SalesContext } from './compose';
import {
  DeliveriesQuery,
  DeliveryList,
  Entitlement,
  EntitlementsQuery,
  EventIdParams,
  ProductList,
  SaleList,
  SalesQuery,
} from './schemas';
import { deliverySummary, productView, saleView } from './views';

/** A seller's agent: what was sent to the seller's endpoint, a resend, and what a buyer holds. */
export function salesTools(deps: Pick<SalesContext, 'sales'>): ToolDef[] {
  const { sales } = deps;
  return [
    defineTool({
      name: 'list_deliveries',
      title: 'List webhook deliveries',
      description:
        'Sales webhook events sent (or being sent) to your endpoint, newest first, with their delivery status and ' +
        'attempt count. Filter by status (pending, delivered, failed), type or since.',
      permission: 'sales.manage',
      input: DeliveriesQuery,
      output: z.object({ deliveries: DeliveryList.shape.deliveries, total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await sales.listDeliveries(principal.org._id, input);
        return { deliveries: items.map(deliverySummary), total };
      },
    }),
    defineTool({
      name: 'resend_delivery',
      title: 'Resend a webhook event',
      description:
        'Sends one event again now to your endpoint (same event ID and body, signed) and answers with that ' +
        'attempt’s outcome; `queued` when no worker took it in time (it is sent when one does).',
      permission: 'sales.manage',
      input: z.object({ eventId: EventIdParams.shape.eventId }),
      output: z.object({
        eventId: z.string(),
        outcome: z.string(),
        attempt: z
          .object({
            number: z.number().int(),
            at: z.iso.datetime(),
            responseStatus: z.number().int().nullable(),
            errorClass: z.string().nullable(),
            durationMs: z.number(),
          })
          .nullable(),
      }),
      annotations: { ...WRITE, idempotentHint: false },
      audit: { resource: 'delivery', id: (input) => input.eventId },
      run: async ({ principal, input }) => {
        const r = await sales.resend(principal.org._id, input.eventId);
        const a = r.attempt;
        return {
          eventId: input.eventId,
          outcome: r.outcome,
          attempt: a
            ? {
                number: a.number,
                at: a.at.toISOString(),
                responseStatus: a.responseStatus,
                errorClass: a.errorClass,
                durationMs: a.durationMs,
              }
            : null,
        };
      },
    }),
    defineTool({
      name: 'list_products',
      title: 'List products',
      description: 'Your products (name, billing type, price, currency, interval), newest first, at most 200.',
      permission: 'sales.manage',
      input: z.object({}),
      output: ProductList,
      annotations: READ,
      run: async ({ principal }) => ({ products: (await sales.listProducts(principal.org._id)).map(productView) }),
    }),
    defineTool({
      name: 'list_sales',
      title: 'List sales',
      description:
        'Recorded sales, newest first, each with its product name, buyer, amount and refundedAt (null unless ' +
        'refunded). Page with limit (at most 100) and offset.',
      permission: 'sales.manage',
      input: SalesQuery,
      output: SaleList,
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await sales.listSales(principal.org._id, input);
        return { sales: items.map(saleView), total, limit: input.limit, offset: input.offset };
      },
    }),
    defineTool({
      name: 'lookup_entitlements',
      title: 'Look up a buyer’s entitlements',
      description:
        'What a buyer (by e-mail) holds from you now: unrefunded one-time purchases and active subscriptions. ' +
        'An empty list means nothing active under your account.',
      permission: 'sales.manage',
      input: EntitlementsQuery,
      output: z.object({ entitlements: z.array(Entitlement) }),
      annotations: READ,
      run: async ({ principal, input }) => ({ entitlements: await sales.entitlements(principal.org._id, input.email) }),
    }),
  ];
}
