import type { S3Client } from '@aws-sdk/client-s3';
import type { Client } from '@temporalio/client';
import type { Db } from 'mongodb';

import { aiClientOptionsFrom, createAiClient } from '../../../shared/ai/client';
import { createAiProviders } from '../../../shared/ai-providers/providers';
import { createAiProviderStore } from '../../../shared/ai-providers/store';
import { createBlobStore } from '../../../shared/builder/files';
import { createTurnFeed } from '../../../shared/builder/ids';
import { createSandboxStore } from '../../../shared/builder/sandbox-store';
import { createBuilderStore } from '../../../shared/builder/store';
import type { Config } from '../../../shared/config';
import type { ProjectStore } from '../../../shared/projects/store';
import type { Redis } from '../../../shared/redis';
import { createBuilderAccess } from './access';
import { createBuilderService } from './service';
import { createTurnService } from './turns';

/** The AI providers and the builder's services, for api/compose.ts (their indexes made before the api serves). */
export async function composeBuilder(c: {
  db: Db;
  s3: S3Client;
  redis: Redis;
  temporal: Client;
  config: Config;
  projects: Pick<ProjectStore, 'get' | 'memberRole'>;
}) {
  const providerStore = createAiProviderStore(c.db);
  const store = createBuilderStore(c.db);
  const sandboxes = createSandboxStore(c.db);
  // Sequential on purpose: FerretDB handles concurrent index builds poorly.
  await providerStore.ensureIndexes();
  await store.ensureIndexes();
  const aiProviders = createAiProviders({
    store: providerStore,
    secretsKey: c.config.SECRETS_KEY,
    allowPrivate: c.config.ALLOW_PRIVATE_AI_PROVIDERS,
  });
  const builder = createBuilderService({
    store,
    blobs: createBlobStore({ s3: c.s3, bucket: c.config.S3_BUCKET }),
    access: createBuilderAccess({ projects: c.projects }),
    aiProviders,
    // The session's response says whether its live preview shows the head (inSync), from the sandbox's record.
    sandboxOf: (session) => sandboxes.viewOf(session),
  });
  const builderTurns = createTurnService({
    store,
    sessions: builder,
    aiProviders,
    temporal: c.temporal,
    taskQueue: c.config.TEMPORAL_TASK_QUEUE,
    feed: createTurnFeed(c.redis, c.config.REDIS_KEY_PREFIX),
  });
  return { aiProviders, aiClient: createAiClient(aiClientOptionsFrom(c.config)), builder, builderTurns };
}

export type BuilderDeps = Awaited<ReturnType<typeof composeBuilder>>;
