import type { Core } from '../../core';
import type { DeploymentsContext } from '../deployments/compose';
import type { FeatureContext } from '../feature';
import { createUploadService } from './service';

/** What uploads take from the deployments feature: a files deploy (tools.mcp.ts) deploys what it stored. */
export type UploadsNeeds = Pick<DeploymentsContext, 'deployments' | 'waitForDeployment'>;

/** The upload service, over the core's upload store (a source deploy reads the same records). */
export const composeUploads = (core: Core, _needs: UploadsNeeds) => ({
  uploads: createUploadService({ store: core.uploadStore, s3: core.s3, config: core.config, log: core.log }),
});

export type UploadsContext = FeatureContext<UploadsNeeds & ReturnType<typeof composeUploads>>;
