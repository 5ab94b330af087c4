import type Docker from 'dockerode';
import type { Db } from 'mongodb';

import { aiClientOptionsFrom, createAiClient } from '@shared/ai/client';
import { createAiProviders } from '@shared/ai-providers/providers';
import { createAiProviderStore } from '@shared/ai-providers/store';
import type { Config } from '@shared/config';
import { createEndpointResolver } from '@shared/database-sources/resolve';
import { createSourceStore } from '@shared/database-sources/store';
import { createCredentialSealer } from '@shared/databases/credentials';
import { createDatabaseStore } from '@shared/databases/store';

import { createSourceQuestionActivities } from './answer';

export { createSourceQuestionActivities, extractAnswer } from './answer';

/** The question workflow's activities over the worker's database, engine and AI client. */
export function createDatabaseSourceActivities(deps: {
  db: Db;
  docker: Docker;
  config: Pick<
    Config,
    | 'SECRETS_KEY'
    | 'ALLOW_PRIVATE_DATABASE_SOURCES'
    | 'ALLOW_PRIVATE_AI_PROVIDERS'
    | 'AI_RETRY_ATTEMPTS'
    | 'AI_RETRY_MAX_DELAY_S'
    | 'AI_IDLE_TIMEOUT_S'
    | 'SOURCE_QUERY_TIMEOUT_MS'
    | 'SOURCE_QUERY_MAX_BYTES'
  >;
}) {
  return createSourceQuestionActivities({
    store: createSourceStore(deps.db),
    resolver: createEndpointResolver({
      secretsKey: deps.config.SECRETS_KEY,
      allowPrivate: deps.config.ALLOW_PRIVATE_DATABASE_SOURCES,
      databases: createDatabaseStore(deps.db),
      databaseCredentials: createCredentialSealer(deps.config.SECRETS_KEY),
      docker: deps.docker,
    }),
    aiProviders: createAiProviders({
      store: createAiProviderStore(deps.db),
      secretsKey: deps.config.SECRETS_KEY,
      allowPrivate: deps.config.ALLOW_PRIVATE_AI_PROVIDERS,
    }),
    ai: createAiClient(aiClientOptionsFrom(deps.config)),
    // An answer is read by a person or an agent: 100 rows, as the query route's default.
    limits: {
      timeoutMs: deps.config.SOURCE_QUERY_TIMEOUT_MS,
      maxBytes: deps.config.SOURCE_QUERY_MAX_BYTES,
      maxRows: 100,
    },
  });
}

export type DatabaseSourceActivities = ReturnType<typeof createDatabaseSourceActivities>;
