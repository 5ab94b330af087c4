import { defineFeature } from '../feature';
import { compatDeploymentRoutes } from './routes.compat';

export const deploymentsFeature = defineFeature({ name: 'deployments', routes: { compat: compatDeploymentRoutes } });
