import { defineFeature } from '../feature';
import { composeAiProviders } from './compose';
import { aiProviderRoutes } from './routes.platform';

export const aiProvidersFeature = defineFeature({
  name: 'ai-providers',
  compose: composeAiProviders,
  routes: { platform: aiProviderRoutes },
});
