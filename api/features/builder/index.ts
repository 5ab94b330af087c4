import { defineFeature } from '../feature';
import { composeBuilder } from './compose';
import { builderGitRoutes } from './routes.git';
import { builderSandboxRoutes } from './routes.sandbox';
import { builderSessionRoutes } from './routes.sessions';
import { builderTurnRoutes } from './routes.turns';

/** The AI builder: sessions, files and checkpoints, shares, model turns, the live preview and Git. */
export const builderFeature = defineFeature({
  name: 'builder',
  compose: composeBuilder,
  routes: {
    platform: (ctx) => [
      ...builderSessionRoutes(ctx),
      ...builderTurnRoutes(ctx),
      ...builderSandboxRoutes(ctx),
      ...builderGitRoutes(ctx),
    ],
  },
});
