import { defineFeature } from '../feature';
import { compatDeploymentRoutes } from './routes.compat';
import { deploymentEventRoutes } from './routes.events';

export const deploymentsFeature = defineFeature({
  name: 'deployments',
  routes: { compat: compatDeploymentRoutes, platform: (ctx) => [...deploymentEventRoutes(ctx)] },
});
