import { aiClientOptionsFrom, createAiClient } from '@shared/ai/client';
import { createAiProviders } from '@shared/ai-providers/providers';
import { createAiProviderStore } from '@shared/ai-providers/store';

import type { Core } from '../../core';
import type { FeatureContext } from '../feature';

/**
 * The organisation's AI providers (keys sealed) and a client that calls them (the provider test); the builder,
 * listed after this feature, runs its turns with them.
 */
export async function composeAiProviders(core: Core) {
  const store = createAiProviderStore(core.db);
  await store.ensureIndexes();
  return {
    aiProviders: createAiProviders({
      store,
      secretsKey: core.config.SECRETS_KEY,
      allowPrivate: core.config.ALLOW_PRIVATE_AI_PROVIDERS,
    }),
    aiClient: createAiClient(aiClientOptionsFrom(core.config)),
  };
}

export type AiProvidersContext = FeatureContext<Awaited<ReturnType<typeof composeAiProviders>>>;
