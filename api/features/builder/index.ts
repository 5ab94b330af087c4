import { defineFeature } from '../feature';
import { composeBuilder } from './compose';
import { builderGitRoutes } from './routes.git';
import { builderPublishRoutes } from './routes.publish';
import { builderSandboxRoutes } from './routes.sandbox';
import { builderSessionRoutes } from './routes.sessions';
import { builderTurnRoutes } from './routes.turns';
import { builderTools } from './tools.mcp';

/** The AI builder: sessions, files and checkpoints, shares, model turns, the live preview, Git and publishing. */
export const builderFeature = defineFeature({
  name: 'builder',
  compose: composeBuilder,
  routes: {
    platform: (ctx) => [
      ...builderSessionRoutes(ctx),
      ...builderTurnRoutes(ctx),
      ...builderSandboxRoutes(ctx),
      ...builderGitRoutes(ctx),
      ...builderPublishRoutes(ctx),
    ],
  },
  tools: builderTools,
});
