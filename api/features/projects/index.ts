import { defineFeature } from '../feature';
import { projectRoutes } from './routes.platform';
import { projectTools } from './tools.mcp';

export const projectsFeature = defineFeature({
  name: 'projects',
  routes: { platform: projectRoutes },
  tools: projectTools,
});
