import { createLinkSecretSealer } from '@shared/buckets/link-secrets';
import { scopedKeysFromConfig } from '@shared/buckets/scoped-keys';
import { createBucketStore } from '@shared/buckets/store';
import { createAttachmentStore } from '@shared/deployments/attachments';
import { createBucketUsage } from '@shared/usage/bucket-usage';

import type { Core } from '../../core';
import type { DeploymentsContext } from '../deployments/compose';
import type { FeatureContext } from '../feature';
import { bucketDeploymentHooks } from './hooks';
import { createBucketService } from './service';

export type BucketsNeeds = Pick<DeploymentsContext, 'deployments'>;

/** The bucket service over its store and usage samples, made here with their indexes. */
export async function composeBuckets(core: Core, needs: BucketsNeeds) {
  const cfg = core.config;
  const store = createBucketStore(core.db);
  await store.ensureIndexes();
  const usage = createBucketUsage(core.db, core.s3);
  await usage.ensureIndexes();
  const endpoint = cfg.S3_APP_ENDPOINT ?? cfg.S3_ENDPOINT ?? `https://s3.${cfg.S3_REGION}.amazonaws.com`;
  return {
    buckets: createBucketService({
      store,
      usage,
      s3: core.s3,
      keys: scopedKeysFromConfig(cfg),
      sealer: createLinkSecretSealer(cfg.SECRETS_KEY),
      projects: core.projectStore,
      authz: core.authz,
      deployments: bucketDeploymentHooks({
        deployments: needs.deployments,
        attachments: createAttachmentStore(core.db),
        env: core.envSealer,
      }),
      lock: core.lock,
      quotaMultiplier: cfg.QUOTA_MULTIPLIER,
      reserved: [cfg.S3_BUCKET],
      address: { endpoint, region: cfg.S3_REGION, forcePathStyle: cfg.S3_FORCE_PATH_STYLE },
    }),
  };
}

export type BucketsContext = FeatureContext<BucketsNeeds & Awaited<ReturnType<typeof composeBuckets>>>;
