import { defineFeature } from '../feature';
import { projectRoutes } from './routes.platform';

export const projectsFeature = defineFeature({ name: 'projects', routes: { platform: projectRoutes } });
