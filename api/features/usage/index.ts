import { defineFeature } from '../feature';
import { composeUsage } from './compose';
import { usageRoutes } from './routes.platform';
import { usageTools } from './tools.mcp';

/** Usage per organisation over a period, from the records the platform keeps (docs/architecture.md, "Usage"). */
export const usageFeature = defineFeature({
  name: 'usage',
  compose: composeUsage,
  routes: { platform: usageRoutes },
  tools: usageTools,
});
