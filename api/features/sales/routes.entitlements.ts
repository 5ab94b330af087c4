import { z } from 'zod';

import { route, type RouteDef } from '../../http/routes';
import type { SalesContext } from './compose';
import { Entitlement, EntitlementsQuery } from './schemas';

/** GET /api/v1/entitlements?email=…: the origin has authenticated the seller API key and put the seller in locals. */
export function entitlementRoutes(ctx: Pick<SalesContext, 'sales'>): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/',
      summary: 'What a buyer holds now under the calling seller (seller API key as the bearer)',
      tags: ['Entitlements'],
      request: { query: EntitlementsQuery },
      before: [],
      responses: {
        200: {
          description: 'Entitlements; empty when the e-mail holds nothing',
          schema: z.object({ entitlements: z.array(Entitlement) }),
        },
        400: { description: 'Missing or malformed email' },
        401: { description: 'Missing, wrong or rotated-out API key' },
        429: { description: '120 requests per minute per key; Retry-After says when' },
        500: { description: 'Server error; retry with backoff. The message names the request ID' },
      },
      handler: async ({ query }, _req, res) => {
        res.json({ entitlements: await ctx.sales.entitlements(res.locals.sellerId as string, query.email) });
      },
    }),
  ];
}
