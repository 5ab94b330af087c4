import { defineFeature } from '../feature';
import { composeSources } from './compose';
import { sourceRoutes } from './routes.platform';
import { sourceTools } from './tools.mcp';

/** External database sources and managed databases as sources: schema, read-only queries, questions. */
export const databaseSourcesFeature = defineFeature({
  name: 'database-sources',
  compose: composeSources,
  routes: { platform: sourceRoutes },
  tools: sourceTools,
});
