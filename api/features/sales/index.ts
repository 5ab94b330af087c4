import { defineFeature } from '../feature';
import { composeSales } from './compose';
import { entitlementRoutes } from './routes.entitlements';
import { salesRoutes } from './routes.platform';
import { salesTools } from './tools.mcp';

/** Sales: products, sales and subscriptions, signed webhook deliveries, and the buyers' entitlement lookup. */
export const salesFeature = defineFeature({
  name: 'sales',
  compose: composeSales,
  routes: { platform: salesRoutes, entitlements: entitlementRoutes },
  tools: salesTools,
});
