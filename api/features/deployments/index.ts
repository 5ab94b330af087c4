import { defineFeature } from '../feature';
import { composeDeployments } from './compose';
import { compatDeploymentRoutes } from './routes.compat';
import { deploymentEventRoutes } from './routes.events';
import { orgDeploymentEventRoutes } from './routes.org-events';
import { platformDeploymentRoutes } from './routes.platform';
import { deploymentTools } from './tools.mcp';
import { deploymentControlTools } from './tools-control.mcp';

export const deploymentsFeature = defineFeature({
  name: 'deployments',
  compose: composeDeployments,
  routes: {
    compat: compatDeploymentRoutes,
    platform: (ctx) => [
      ...platformDeploymentRoutes(ctx),
      ...deploymentEventRoutes(ctx),
      ...orgDeploymentEventRoutes(ctx),
    ],
  },
  tools: (ctx) => [...deploymentTools(ctx), ...deploymentControlTools(ctx)],
});
