import { defineFeature } from '../feature';
import { tokenRoutes } from './routes.platform';

export const tokensFeature = defineFeature({ name: 'tokens', routes: { platform: tokenRoutes } });
