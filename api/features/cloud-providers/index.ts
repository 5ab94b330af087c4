import { defineFeature } from '../feature';
import { composeCloudProviders } from './compose';
import { cloudProviderRoutes } from './routes.platform';
import { cloudProviderTools } from './tools.mcp';

/** Organisations' cloud credentials: what makes cloud_a_run, cloud_b_container_apps and cloud_c_ecs_fargate available. */
export const cloudProvidersFeature = defineFeature({
  name: 'cloud-providers',
  compose: composeCloudProviders,
  routes: { platform: cloudProviderRoutes },
  tools: cloudProviderTools,
});
