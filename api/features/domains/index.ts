import { defineFeature } from '../feature';
import { composeDomains } from './compose';
import { domainRoutes } from './routes.platform';
import { domainTools } from './tools.mcp';

export const domainsFeature = defineFeature({
  name: 'domains',
  compose: composeDomains,
  routes: { platform: domainRoutes },
  tools: domainTools,
});
