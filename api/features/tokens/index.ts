import { defineFeature } from '../feature';
import { tokenRoutes } from './routes.platform';
import { tokenTools } from './tools.mcp';

export const tokensFeature = defineFeature({ name: 'tokens', routes: { platform: tokenRoutes }, tools: tokenTools });
