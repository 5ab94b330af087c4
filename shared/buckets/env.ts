import type { BucketEnvField } from '../deployments/attachments';

/**
 * The variables a linked bucket gives a deployment, each a reference read as its containers start
 * (activities/bucket/env-refs.ts): the names every S3 SDK's examples read, so an app needs no mapping.
 */
export const BUCKET_ENV: Record<BucketEnvField, string> = {
  endpoint: 'S3_ENDPOINT',
  bucket: 'S3_BUCKET',
  accessKeyId: 'S3_ACCESS_KEY_ID',
  secretAccessKey: 'S3_SECRET_ACCESS_KEY',
  region: 'S3_REGION',
  forcePathStyle: 'S3_FORCE_PATH_STYLE',
};

/** The link's variables in a fixed order: S3_BUCKET first, so a deployment that has a bucket conflicts at once. */
export const BUCKET_ENV_ORDER: BucketEnvField[] = [
  'bucket',
  'endpoint',
  'accessKeyId',
  'secretAccessKey',
  'region',
  'forcePathStyle',
];
