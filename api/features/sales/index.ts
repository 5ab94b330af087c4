import { defineFeature } from '../feature';
import { entitlementRoutes } from './routes.entitlements';
import { salesRoutes } from './routes.platform';
import { salesTools } from './tools.mcp';

/** Sales: products, sales and subscriptions, signed webhook deliveries, and the buyers' entitlement lookup. */
export const salesFeature = defineFeature({
  name: 'sales',
  routes: { platform: salesRoutes, entitlements: entitlementRoutes },
  tools: salesTools,
});
