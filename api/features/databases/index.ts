import { defineFeature } from '../feature';
import { composeDatabases } from './compose';
import { databaseRoutes } from './routes.platform';
import { databaseTools } from './tools.mcp';

/** Databases beside a deployment and managed ones, with backups, restores, schedules and snapshots. */
export const databasesFeature = defineFeature({
  name: 'databases',
  compose: composeDatabases,
  routes: { platform: databaseRoutes },
  tools: databaseTools,
});
