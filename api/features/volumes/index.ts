import { defineFeature } from '../feature';
import { composeVolumes } from './compose';
import { volumeRoutes } from './routes.platform';
import { volumeTools } from './tools.mcp';

export const volumesFeature = defineFeature({
  name: 'volumes',
  compose: composeVolumes,
  routes: { platform: volumeRoutes },
  tools: volumeTools,
});
