import { createEndpointResolver } from '@shared/database-sources/resolve';
import { createSourceStore } from '@shared/database-sources/store';
import { createCredentialSealer } from '@shared/databases/credentials';
import { createDatabaseStore } from '@shared/databases/store';

import type { Core } from '../../core';
import type { AiProvidersContext } from '../ai-providers/compose';
import type { FeatureContext } from '../feature';
import { createSourceService } from './service';

export type SourcesNeeds = Pick<AiProvidersContext, 'aiProviders'>;

/** Database sources over their store (made here with its indexes); managed databases are read from theirs. */
export async function composeSources(core: Core, needs: SourcesNeeds) {
  const store = createSourceStore(core.db);
  await store.ensureIndexes();
  const databases = createDatabaseStore(core.db);
  return {
    sources: createSourceService({
      store,
      resolver: createEndpointResolver({
        secretsKey: core.config.SECRETS_KEY,
        allowPrivate: core.config.ALLOW_PRIVATE_DATABASE_SOURCES,
        databases,
        databaseCredentials: createCredentialSealer(core.config.SECRETS_KEY),
        docker: core.docker,
      }),
      databases,
      projects: core.projectStore,
      authz: core.authz,
      aiProviders: needs.aiProviders,
      temporal: core.temporal,
      lock: core.lock,
      taskQueue: core.config.TEMPORAL_TASK_QUEUE,
      quotaMultiplier: core.config.QUOTA_MULTIPLIER,
      limits: {
        timeoutMs: core.config.SOURCE_QUERY_TIMEOUT_MS,
        maxRows: core.config.SOURCE_QUERY_MAX_ROWS,
        maxBytes: core.config.SOURCE_QUERY_MAX_BYTES,
      },
      askWaitMs: core.config.SOURCE_ASK_WAIT_S * 1000,
    }),
  };
}

export type SourcesContext = FeatureContext<SourcesNeeds & Awaited<ReturnType<typeof composeSources>>>;
