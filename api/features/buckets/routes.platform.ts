import { principalOf, projectFrom } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { bucketProject } from './access';
import type { BucketsContext } from './compose';
import {
  Bucket,
  BucketIdParams,
  BucketList,
  BucketListQuery,
  CreateBucketRequest,
  CreateCredentialRequest,
  Credential,
  CredentialList,
  CredentialParams,
  DeleteBucketQuery,
  Linked,
  LinkList,
  LinkParams,
  LinkRequest,
  NewCredential,
} from './schemas';
import { bucketView, credentialView } from './views';

const NO_SCOPED_KEYS =
  'SCOPED_KEYS_UNAVAILABLE: the object store has no admin API for keys scoped to one bucket (not MinIO), or it is not configured; the operator makes keys in the store itself';

/**
 * Buckets in the object store: `/buckets…` makes and deletes them, `/buckets/:id/credentials…` their keys (each opens
 * that bucket only), and `/buckets/:id/links…` gives a deployment the bucket's address and a key of its own, as
 * `/databases/:id/links…` does a database's URL.
 */
export function bucketRoutes(ctx: Pick<BucketsContext, 'buckets' | 'can'>): RouteDef[] {
  const { buckets, can } = ctx;
  const tags = ['Buckets'];
  const ofBucket = bucketProject(buckets);
  return [
    route({
      method: 'post',
      path: '/buckets',
      summary: 'Create a bucket in the object store; get keys for it with POST /buckets/{id}/credentials',
      description:
        'name is a label, unique in the organisation; the real bucket (s3Name) is generated from it and never collides with another organisation’s or the service’s own. A bucket belongs to the organisation, or to projectId (judged by your role there). The plan bounds how many buckets the organisation holds (429 QUOTA_EXCEEDED).',
      tags,
      request: { body: CreateBucketRequest },
      before: [can('bucket.create', { project: projectFrom.body('projectId') })],
      responses: {
        201: { description: 'The bucket, empty', schema: success(Bucket) },
        404: { description: 'PROJECT_NOT_FOUND: no such project in this organisation' },
        409: { description: 'CONFLICT: a bucket of that name exists in the organisation' },
        429: { description: "QUOTA_EXCEEDED: the plan's bucket count would be passed" },
      },
      handler: async ({ body }, req, res) => {
        res.status(201).json(ok(bucketView(await buckets.create(principalOf(req), body))));
      },
    }),
    route({
      method: 'get',
      path: '/buckets',
      summary: "List buckets by name: the organisation's and those of the projects you can see",
      tags,
      request: { query: BucketListQuery },
      before: [can('bucket.read')],
      responses: { 200: { description: 'A page of buckets', schema: success(BucketList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await buckets.list(principalOf(req), query);
        res.json(ok({ buckets: items.map((b) => bucketView(b)), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/buckets/:id',
      summary: 'A bucket and what it holds (objects and bytes, measured at most a minute ago)',
      tags,
      request: { params: BucketIdParams },
      before: [can('bucket.read', ofBucket)],
      responses: {
        200: { description: 'The bucket with its usage', schema: success(Bucket) },
        404: { description: 'BUCKET_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        const { bucket, usage } = await buckets.getWithUsage(principalOf(req), params.id);
        res.json(ok(bucketView(bucket, usage)));
      },
    }),
    route({
      method: 'delete',
      path: '/buckets/:id',
      summary: 'Delete a bucket, its keys and its links; refused while it holds objects unless force=true',
      description:
        'Linked deployments get a new release without the bucket’s variables, and every key (a link’s too) is revoked. With force=true the objects are deleted first.',
      tags,
      request: { params: BucketIdParams, query: DeleteBucketQuery },
      before: [can('bucket.delete', ofBucket)],
      responses: {
        200: { description: 'Deleted', schema: success(Bucket) },
        404: { description: 'BUCKET_NOT_FOUND' },
        409: { description: 'BUCKET_NOT_EMPTY: it holds objects (delete them, or use force=true)' },
      },
      handler: async ({ params, query }, req, res) => {
        res.json(ok(bucketView(await buckets.remove(principalOf(req), params.id, query.force))));
      },
    }),
    route({
      method: 'post',
      path: '/buckets/:id/credentials',
      summary: 'Make a key that opens this bucket only; its secret is shown in this answer and never again',
      description:
        'Reading or writing any other bucket with it (another of the organisation’s, another organisation’s, the service’s own) is AccessDenied. Slipway keeps nothing of the secret. The plan bounds keys per bucket (429).',
      tags,
      request: { params: BucketIdParams, body: CreateCredentialRequest },
      before: [can('bucket.credentials', ofBucket)],
      audit: { action: 'bucket-credential.create', resource: 'bucket-credential', idField: 'keyId' },
      responses: {
        201: { description: 'The key, with its secret', schema: success(NewCredential) },
        404: { description: 'BUCKET_NOT_FOUND' },
        429: { description: 'QUOTA_EXCEEDED: the plan’s keys per bucket' },
        501: { description: NO_SCOPED_KEYS },
      },
      handler: async ({ params, body }, req, res) => {
        const r = await buckets.createKey(principalOf(req), params.id, body);
        res.status(201).json(
          ok({
            ...credentialView(r.record),
            secretAccessKey: r.secret,
            endpoint: r.address.endpoint,
            bucket: r.bucket.s3Name,
            region: r.address.region,
            forcePathStyle: r.address.forcePathStyle,
          }),
        );
      },
    }),
    route({
      method: 'get',
      path: '/buckets/:id/credentials',
      summary: 'The bucket’s keys, without secrets; a link’s key names its deployment',
      tags,
      request: { params: BucketIdParams },
      before: [can('bucket.read', ofBucket)],
      responses: {
        200: { description: 'Its keys', schema: success(CredentialList) },
        404: { description: 'BUCKET_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok({ credentials: (await buckets.listKeys(principalOf(req), params.id)).map(credentialView) }));
      },
    }),
    route({
      method: 'delete',
      path: '/buckets/:id/credentials/:keyId',
      summary: 'Revoke a key at once (a link’s key is revoked by unlinking)',
      tags,
      request: { params: CredentialParams },
      before: [can('bucket.credentials', ofBucket)],
      audit: { action: 'bucket-credential.delete', resource: 'bucket-credential' },
      responses: {
        200: { description: 'Revoked', schema: success(Credential) },
        404: { description: 'BUCKET_NOT_FOUND or CREDENTIAL_NOT_FOUND' },
        409: { description: 'CONFLICT: the key is a link’s (unlink instead)' },
        501: { description: NO_SCOPED_KEYS },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(credentialView(await buckets.revokeKey(principalOf(req), params.id, params.keyId))));
      },
    }),
    route({
      method: 'post',
      path: '/buckets/:id/links',
      summary: 'Give a deployment this bucket (S3_* variables and a key of its own), shipped as a new release',
      description:
        'The deployment (of the bucket’s project) reads S3_ENDPOINT, S3_BUCKET, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, S3_REGION and S3_FORCE_PATH_STYLE as references, resolved as its containers start. The link’s key opens this bucket only; it shows in GET …/credentials as kind link and is revoked on unlink, and when the bucket or the deployment is deleted. A deployment has one linked bucket.',
      tags,
      request: { params: BucketIdParams, body: LinkRequest },
      before: [can('bucket.create', ofBucket)],
      responses: {
        202: { description: 'Linked; the release shipping it', schema: success(Linked) },
        404: { description: 'BUCKET_NOT_FOUND or DEPLOYMENT_NOT_FOUND' },
        409: { description: 'CONFLICT: another project’s deployment, or it has S3_* variables or a bucket already' },
        501: { description: NO_SCOPED_KEYS },
      },
      handler: async ({ params, body }, req, res) => {
        const r = await buckets.link(principalOf(req), params.id, body.deploymentId);
        res.status(202).json(
          ok({
            bucket: bucketView(r.bucket),
            deploymentId: r.deploymentId,
            env: [
              'S3_ACCESS_KEY_ID',
              'S3_BUCKET',
              'S3_ENDPOINT',
              'S3_FORCE_PATH_STYLE',
              'S3_REGION',
              'S3_SECRET_ACCESS_KEY',
            ],
            release: r.release,
          }),
        );
      },
    }),
    route({
      method: 'get',
      path: '/buckets/:id/links',
      summary: 'The deployments this bucket is linked to, and the variables each reads',
      tags,
      request: { params: BucketIdParams },
      before: [can('bucket.read', ofBucket)],
      responses: {
        200: { description: 'Its links', schema: success(LinkList) },
        404: { description: 'BUCKET_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok({ links: await buckets.links(principalOf(req), params.id) }));
      },
    }),
    route({
      method: 'delete',
      path: '/buckets/:id/links/:deploymentId',
      summary: 'Take the bucket off a deployment (a new release without its variables) and revoke the link’s key',
      tags,
      request: { params: LinkParams },
      before: [can('bucket.delete', ofBucket)],
      responses: {
        202: { description: 'Unlinked; the release shipping it', schema: success(Linked) },
        404: { description: 'BUCKET_NOT_FOUND or LINK_NOT_FOUND' },
        501: { description: NO_SCOPED_KEYS },
      },
      handler: async ({ params }, req, res) => {
        const r = await buckets.unlink(principalOf(req), params.id, params.deploymentId);
        res
          .status(202)
          .json(ok({ bucket: bucketView(r.bucket), deploymentId: r.deploymentId, env: r.env, release: r.release }));
      },
    }),
  ];
}
