import { defineFeature } from '../feature';
import { composeProjects } from './compose';
import { projectRoutes } from './routes.platform';
import { projectTools } from './tools.mcp';

export const projectsFeature = defineFeature({
  name: 'projects',
  compose: composeProjects,
  routes: { platform: projectRoutes },
  tools: projectTools,
});
