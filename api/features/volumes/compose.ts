import { createDeploymentStore } from '@shared/deployments/store';
import { createVolumeStore } from '@shared/volumes/store';

import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createVolumeService } from './service';

/** The volume service over its own store, made here with its indexes. */
export async function composeVolumes(core: Core) {
  const store = createVolumeStore(core.db);
  await store.ensureIndexes();
  return {
    volumes: createVolumeService({
      store,
      projects: core.projectStore,
      authz: core.authz,
      temporal: core.temporal,
      lock: core.lock,
      taskQueue: core.config.TEMPORAL_TASK_QUEUE,
      quotaMultiplier: core.config.QUOTA_MULTIPLIER,
      acceptWaitMs: core.config.DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS,
      // The deployments' own indexes are made by their feature.
      deployments: createDeploymentStore(core.db),
    }),
  };
}

export type VolumesContext = FeatureContext<Awaited<ReturnType<typeof composeVolumes>>>;
