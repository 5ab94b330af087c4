import type { AiProviders } from '@shared/ai-providers/providers';
import type { AiProviderSummary } from '@shared/ai-providers/types';
import { AppError } from '@shared/errors';

/** The organisation's provider a session may choose: one that exists here and is enabled. */
export async function providerFor(
  aiProviders: Pick<AiProviders, 'get'>,
  orgId: string,
  providerId: string,
): Promise<AiProviderSummary> {
  const provider = await aiProviders.get(orgId, providerId);
  if (!provider)
    throw new AppError(
      'AI_PROVIDER_NOT_FOUND',
      `No AI provider ${providerId} in this organisation; see GET /builder/providers.`,
      { providerId },
    );
  if (!provider.enabled)
    throw new AppError(
      'INVALID_REQUEST',
      `The AI provider ${provider.name} is disabled; choose an enabled one (GET /builder/providers).`,
      { providerId },
    );
  return provider;
}

/** A model a session may choose with this provider: its default or one of the models it lists. */
export function checkModel(provider: Pick<AiProviderSummary, 'name' | 'defaultModel' | 'models'>, model: string) {
  const allowed = [provider.defaultModel, ...(provider.models ?? [])];
  if (!allowed.includes(model))
    throw new AppError('INVALID_REQUEST', `The provider ${provider.name} offers ${allowed.join(', ')}, not ${model}.`, {
      model,
      allowed,
    });
}
