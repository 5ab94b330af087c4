import { z } from 'zod';

import type { Principal } from '@shared/identity/service';
import { ignore } from '@shared/ignore';

import { defineTool, DESTRUCTIVE, READ, type ToolDef, WRITE } from '../../mcp/tool';
import type { BucketsContext } from './compose';
import { Bucket, BucketListQuery, CreateBucketRequest, Credential, NewCredential } from './schemas';
import { bucketView, credentialView } from './views';

const BucketRef = z.object({ bucketId: z.uuid('a bucket ID in UUID format') });

/** What an agent needs of buckets: make and remove them, their keys, and their links to deployments. */
export function bucketTools(deps: Pick<BucketsContext, 'buckets'>): ToolDef[] {
  const { buckets } = deps;
  /** The project of the bucket the call names, so the project role decides; unknown: the handler answers 404. */
  const ofBucket = async (p: Principal, input: { bucketId: string }) =>
    (await buckets.get(p, input.bucketId).catch(ignore('an unknown bucket is the handler’s 404', undefined)))
      ?.projectId ?? undefined;
  return [
    defineTool({
      name: 'list_buckets',
      title: 'List buckets',
      description: "Object-store buckets by name: the organisation's and those of the projects you can see.",
      permission: 'bucket.read',
      input: BucketListQuery,
      output: z.object({ buckets: z.array(Bucket), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await buckets.list(principal, input);
        return { buckets: items.map((b) => bucketView(b)), total };
      },
    }),
    defineTool({
      name: 'create_bucket',
      title: 'Create a bucket',
      description:
        'Creates an S3 bucket in the organisation or in projectId. name is a label (3–40 lower-case letters, digits, ' +
        '"-"); the real bucket name is s3Name. Get a key with create_bucket_credential, or give it to a deployment ' +
        'with link_bucket.',
      permission: 'bucket.create',
      project: async (_p, input) => input.projectId,
      input: CreateBucketRequest,
      output: z.object({ bucket: Bucket }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'bucket', id: (_i, out) => out?.bucket.id },
      run: async ({ principal, input }) => ({ bucket: bucketView(await buckets.create(principal, input)) }),
    }),
    defineTool({
      name: 'delete_bucket',
      title: 'Delete a bucket',
      description:
        'Deletes a bucket, revoking its keys and unlinking its deployments (new releases). A bucket holding ' +
        'objects is refused unless force is true, which deletes the objects too.',
      permission: 'bucket.delete',
      project: ofBucket,
      input: BucketRef.extend({ force: z.boolean().default(false) }),
      output: z.object({ bucket: Bucket }),
      annotations: DESTRUCTIVE,
      audit: { resource: 'bucket', id: (i) => i.bucketId },
      run: async ({ principal, input }) => ({
        bucket: bucketView(await buckets.remove(principal, input.bucketId, input.force)),
      }),
    }),
    defineTool({
      name: 'create_bucket_credential',
      title: 'Make a key for a bucket',
      description:
        'Makes an access key that opens this bucket only (AccessDenied on every other). The secret is in this ' +
        'answer and never again: store it where the key will be used.',
      permission: 'bucket.credentials',
      project: ofBucket,
      input: BucketRef.extend({ name: z.string().min(1).max(64).optional() }),
      output: z.object({ credential: NewCredential }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'bucket-credential', id: (_i, out) => out?.credential.keyId },
      run: async ({ principal, input }) => {
        const r = await buckets.createKey(principal, input.bucketId, { name: input.name });
        return {
          credential: {
            ...credentialView(r.record),
            secretAccessKey: r.secret,
            endpoint: r.address.endpoint,
            bucket: r.bucket.s3Name,
            region: r.address.region,
            forcePathStyle: r.address.forcePathStyle,
          },
        };
      },
    }),
    defineTool({
      name: 'list_bucket_credentials',
      title: 'List a bucket’s keys',
      description: 'The bucket’s keys without secrets; a link’s key (kind link) names its deployment.',
      permission: 'bucket.read',
      project: ofBucket,
      input: BucketRef,
      output: z.object({ credentials: z.array(Credential) }),
      annotations: READ,
      run: async ({ principal, input }) => ({
        credentials: (await buckets.listKeys(principal, input.bucketId)).map(credentialView),
      }),
    }),
    defineTool({
      name: 'revoke_bucket_credential',
      title: 'Revoke a bucket key',
      description: 'Revokes a key at once; a link’s key is revoked by unlink_bucket instead.',
      permission: 'bucket.credentials',
      project: ofBucket,
      input: BucketRef.extend({ keyId: z.string().min(1).max(64) }),
      output: z.object({ credential: Credential }),
      annotations: DESTRUCTIVE,
      audit: { resource: 'bucket-credential', id: (i) => i.keyId },
      run: async ({ principal, input }) => ({
        credential: credentialView(await buckets.revokeKey(principal, input.bucketId, input.keyId)),
      }),
    }),
    defineTool({
      name: 'link_bucket',
      title: 'Link a bucket to a deployment',
      description:
        'Gives a deployment of the bucket’s project S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, ' +
        'S3_REGION and S3_FORCE_PATH_STYLE, with a key of its own that opens this bucket only, shipped as a new release.',
      permission: 'bucket.create',
      project: ofBucket,
      input: BucketRef.extend({ deploymentId: z.uuid('a deployment ID in UUID format') }),
      output: z.object({ bucket: Bucket, deploymentId: z.string(), release: z.unknown() }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'bucket', id: (i) => i.bucketId },
      run: async ({ principal, input }) => {
        const r = await buckets.link(principal, input.bucketId, input.deploymentId);
        return { bucket: bucketView(r.bucket), deploymentId: r.deploymentId, release: r.release };
      },
    }),
    defineTool({
      name: 'unlink_bucket',
      title: 'Unlink a bucket from a deployment',
      description: 'Takes the bucket’s variables off the deployment (a new release) and revokes the link’s key.',
      permission: 'bucket.delete',
      project: ofBucket,
      input: BucketRef.extend({ deploymentId: z.uuid('a deployment ID in UUID format') }),
      output: z.object({ bucket: Bucket, deploymentId: z.string(), release: z.unknown() }),
      annotations: DESTRUCTIVE,
      audit: { resource: 'bucket', id: (i) => i.bucketId },
      run: async ({ principal, input }) => {
        const r = await buckets.unlink(principal, input.bucketId, input.deploymentId);
        return { bucket: bucketView(r.bucket), deploymentId: r.deploymentId, release: r.release };
      },
    }),
  ];
}
