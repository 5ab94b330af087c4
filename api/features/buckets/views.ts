import type { BucketCredentialRecord, BucketRecord, BucketUsage } from '@shared/buckets/types';

/** A bucket as both the platform API and MCP show it. */
export const bucketView = (b: BucketRecord, usage?: BucketUsage) => ({
  id: b._id,
  name: b.name,
  s3Name: b.s3Name,
  projectId: b.projectId,
  createdAt: b.createdAt.toISOString(),
  ...(usage ? { usage: { ...usage, measuredAt: usage.measuredAt.toISOString() } } : {}),
});

/** A key without its secret: the only way a key is ever shown after it was made. */
export const credentialView = (c: BucketCredentialRecord) => ({
  keyId: c._id,
  accessKeyId: c._id,
  bucketId: c.bucketId,
  name: c.name,
  kind: c.kind,
  deploymentId: c.deploymentId,
  createdAt: c.createdAt.toISOString(),
});
