import { defineFeature } from '../feature';
import { builderGitRoutes } from './routes.git';
import { builderSandboxRoutes } from './routes.sandbox';
import { builderSessionRoutes } from './routes.sessions';
import { builderTurnRoutes } from './routes.turns';

/** The AI builder: sessions, files and checkpoints, shares, and model turns. */
export const builderFeature = defineFeature({
  name: 'builder',
  routes: {
    platform: (ctx) => [
      ...builderSessionRoutes(ctx),
      ...builderTurnRoutes(ctx),
      ...builderSandboxRoutes(ctx),
      ...builderGitRoutes(ctx),
    ],
  },
});
