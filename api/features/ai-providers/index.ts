import { defineFeature } from '../feature';
import { aiProviderRoutes } from './routes.platform';

export const aiProvidersFeature = defineFeature({ name: 'ai-providers', routes: { platform: aiProviderRoutes } });
