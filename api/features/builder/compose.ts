import type { AiProviders } from '@shared/ai-providers/providers';
import { createBlobStore } from '@shared/builder/files';
import { createGitBindingStore } from '@shared/builder/git-store';
import { createTurnFeed } from '@shared/builder/ids';
import { createPublicationStore } from '@shared/builder/publish-store';
import { createSandboxStore } from '@shared/builder/sandbox-store';
import { createBuilderStore } from '@shared/builder/store';

import type { Core } from '../../core';
import type { DeploymentsContext } from '../deployments/compose';
import type { FeatureContext } from '../feature';
import type { UploadsContext } from '../uploads/compose';
import { createBuilderAccess } from './access';
import { createBuilderGitService } from './git-service';
import { createBuilderPublisher } from './publish';
import { createSandboxService } from './sandbox-service';
import { createBuilderService } from './service';
import { createTurnService } from './turns';

/**
 * What the builder takes from the features before it: the organisation's AI providers run its turns; a publish
 * stores the head as an upload and deploys it as the deployments feature deploys any upload.
 */
export interface BuilderNeeds extends Pick<DeploymentsContext, 'deployments' | 'waitForDeployment'> {
  aiProviders: Pick<AiProviders, 'get' | 'list'>;
  uploads: Pick<UploadsContext['uploads'], 'pack' | 'acceptPacked'>;
}

/** The builder's services: sessions, turns, the live preview and Git (its stores' indexes made before the api serves). */
export async function composeBuilder(core: Core, needs: BuilderNeeds) {
  const { db, config, temporal } = core;
  const { aiProviders } = needs;
  const store = createBuilderStore(db);
  const sandboxes = createSandboxStore(db);
  const publications = createPublicationStore(db);
  await store.ensureIndexes();
  await publications.ensureIndexes();
  const blobs = createBlobStore({ s3: core.s3, bucket: config.S3_BUCKET });
  const builder = createBuilderService({
    store,
    blobs,
    access: createBuilderAccess({ projects: core.projectStore }),
    aiProviders,
    // The session's response says whether its live preview shows the head (inSync), from the sandbox's record.
    sandboxOf: (session) => sandboxes.viewOf(session),
  });
  return {
    builder,
    builderTurns: createTurnService({
      store,
      sessions: builder,
      aiProviders,
      temporal,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      feed: createTurnFeed(core.redis, config.REDIS_KEY_PREFIX),
      log: core.log,
    }),
    builderSandbox: createSandboxService({
      sessions: builder,
      sandboxes,
      temporal,
      config,
      orgSettings: core.orgSettings,
    }),
    builderGit: createBuilderGitService({
      builder,
      store,
      bindings: createGitBindingStore(db),
      temporal,
      git: core.gitSource,
      config,
    }),
    builderPublish: createBuilderPublisher({
      builder,
      blobs,
      publications,
      deployments: needs.deployments,
      uploads: needs.uploads,
      authz: core.authz,
      lock: core.lock,
      creations: core.limiters.deployCreate,
      config,
    }),
  };
}

export type BuilderContext = FeatureContext<BuilderNeeds & Awaited<ReturnType<typeof composeBuilder>>>;
