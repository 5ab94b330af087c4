import { defineFeature } from '../feature';
import { composeBuckets } from './compose';
import { bucketRoutes } from './routes.platform';
import { bucketTools } from './tools.mcp';

export const bucketsFeature = defineFeature({
  name: 'buckets',
  compose: composeBuckets,
  routes: { platform: bucketRoutes },
  tools: bucketTools,
});
