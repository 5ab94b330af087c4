import { createDeploymentStore } from '@shared/deployments/store';

import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createCloudProviderService } from './service';

export function composeCloudProviders(core: Core) {
  return {
    cloudProviders: createCloudProviderService({
      store: core.cloudCredentials,
      temporal: core.temporal,
      deployments: createDeploymentStore(core.db),
      config: core.config,
    }),
  };
}

export type CloudProvidersContext = FeatureContext<ReturnType<typeof composeCloudProviders>>;
