import { defineFeature } from '../feature';
import { composeGit } from './compose';
import { gitHookRoutes } from './routes.hooks';
import { gitRoutes } from './routes.platform';
import { gitTools } from './tools.mcp';

/** Git connections and bindings: a push to a bound branch, posted to the hooks origin, ships a new release. */
export const gitFeature = defineFeature({
  name: 'git',
  compose: composeGit,
  routes: { platform: gitRoutes, hooks: gitHookRoutes },
  tools: gitTools,
});
