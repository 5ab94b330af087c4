import type { S3Client } from '@aws-sdk/client-s3';
import type { Db } from 'mongodb';

import { aiClientOptionsFrom, createAiClient } from '@shared/ai/client';
import { createAiProviders } from '@shared/ai-providers/providers';
import { createAiProviderStore } from '@shared/ai-providers/store';
import { createBlobStore } from '@shared/builder/files';
import { createTurnFeed } from '@shared/builder/ids';
import { createBuilderStore } from '@shared/builder/store';
import type { Config } from '@shared/config';
import type { Redis } from '@shared/redis';
import { createAiUsage } from '@shared/usage/ai-usage';

import { createTurnActivities, type TurnActivityDeps } from './turn';

/**
 * The builder turn workflow's activities (workflows/builder-turn) from the worker's connections: the only place an
 * AI provider's key is opened.
 */
export function createBuilderTurnActivities(deps: {
  db: Db;
  s3: S3Client;
  redis?: Redis;
  config: Pick<
    Config,
    | 'S3_BUCKET'
    | 'SECRETS_KEY'
    | 'REDIS_KEY_PREFIX'
    | 'ALLOW_PRIVATE_AI_PROVIDERS'
    | 'AI_RETRY_ATTEMPTS'
    | 'AI_RETRY_MAX_DELAY_S'
    | 'AI_IDLE_TIMEOUT_S'
  >;
  onCheckpoint?: TurnActivityDeps['onCheckpoint'];
}) {
  return createTurnActivities({
    store: createBuilderStore(deps.db),
    blobs: createBlobStore({ s3: deps.s3, bucket: deps.config.S3_BUCKET }),
    aiProviders: createAiProviders({
      store: createAiProviderStore(deps.db),
      secretsKey: deps.config.SECRETS_KEY,
      allowPrivate: deps.config.ALLOW_PRIVATE_AI_PROVIDERS,
    }),
    ai: createAiClient(aiClientOptionsFrom(deps.config)),
    usage: createAiUsage(deps.db),
    ...(deps.redis ? { feed: createTurnFeed(deps.redis, deps.config.REDIS_KEY_PREFIX) } : {}),
    ...(deps.onCheckpoint ? { onCheckpoint: deps.onCheckpoint } : {}),
  });
}

export type BuilderTurnActivities = ReturnType<typeof createBuilderTurnActivities>;
