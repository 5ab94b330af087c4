import { createSalesStore } from '@shared/sales/store';

import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createOrganizationService } from './service';

/** The settings service over the core's versioned store; the seller settings are read from the sales store. */
export function composeOrganization(core: Core) {
  return {
    organization: createOrganizationService({
      store: core.orgSettings,
      identity: core.identity,
      engineRegion: core.config.ENGINE_REGION,
      cloudRegions: (orgId) => core.cloudCredentials.regions(orgId),
    }),
    sellerSettings: createSalesStore(core.db),
  };
}

export type OrganizationContext = FeatureContext<ReturnType<typeof composeOrganization>>;
