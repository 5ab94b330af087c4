import { randomBytes } from 'node:crypto';

import { hashToken } from '@shared/identity/tokens';

import type { SalesDeps } from './delivery';
import type { Entitlement } from './schemas';

/** "sk_" and four characters of 43 random ones: enough to tell keys apart, nothing towards guessing one. */
const API_KEY_PREFIX_LENGTH = 7;

/** What a buyer holds under a seller, and the seller's API key that asks for it (GET /api/v1/entitlements). */
export function createEntitlementService(deps: Pick<SalesDeps, 'store'>) {
  const { store } = deps;
  return {
    /** A new seller API key, shown once; the previous one stops working at once. */
    async createApiKey(orgId: string) {
      const apiKey = `sk_${randomBytes(32).toString('base64url')}`;
      await store.setApiKey(orgId, {
        hash: hashToken(apiKey),
        createdAt: new Date(),
        prefix: apiKey.slice(0, API_KEY_PREFIX_LENGTH),
      });
      return { apiKey };
    },
    revokeApiKey: (orgId: string) => store.setApiKey(orgId, null),

    /** What the buyer holds now under this seller: unrefunded one-time purchases, active subscriptions. */
    async entitlements(orgId: string, email: string) {
      const sales = (await store.salesOfBuyer(orgId, email.toLowerCase())).filter((s) => !s.refundedAt);
      const products = new Map(
        (await store.productsByIds(orgId, [...new Set(sales.map((s) => s.productId))])).map((p) => [p._id, p]),
      );
      const subs = new Map(
        (
          await store.subscriptionsByIds(
            orgId,
            sales.flatMap((s) => (s.subscriptionId ? [s.subscriptionId] : [])),
          )
        ).map((s) => [s._id, s]),
      );
      return sales.flatMap((sale): Entitlement[] => {
        const product = products.get(sale.productId)!;
        const common = {
          productId: product._id,
          productName: product.name,
          saleId: sale._id,
          purchasedAt: sale.createdAt.toISOString(),
        };
        if (!sale.subscriptionId) return [{ type: 'one_time', ...common, status: 'active' }];
        const sub = subs.get(sale.subscriptionId);
        if (!sub || sub.status !== 'active') return [];
        return [
          {
            type: 'subscription',
            ...common,
            status: sub.status,
            subscriptionId: sub._id,
            currentPeriodEnd: sub.currentPeriodEnd.toISOString(),
          },
        ];
      });
    },
  };
}
