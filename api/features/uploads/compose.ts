import type { Core } from '../../core';
import type { FeatureContext } from '../feature';
import { createUploadService } from './service';

/** The upload service, over the core's upload store (a source deploy reads the same records). */
export const composeUploads = (core: Core) => ({
  uploads: createUploadService({ store: core.uploadStore, s3: core.s3, config: core.config, log: core.log }),
});

export type UploadsContext = FeatureContext<ReturnType<typeof composeUploads>>;
