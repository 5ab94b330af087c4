import { z } from 'zod';

import { BUCKET_NAME_MAX, BUCKET_NAME_MIN, BUCKET_NAME_PATTERN } from '@shared/buckets/names';
import { ACCESS_KEY_ID_PATTERN } from '@shared/buckets/scoped-keys';

import { queryInt } from '../../http/fields';

/** The whole rule in the document (length and pattern), so a client that follows it is never refused. */
const name = z
  .string()
  .min(BUCKET_NAME_MIN, `a bucket name is ${BUCKET_NAME_MIN} to ${BUCKET_NAME_MAX} characters long`)
  .max(BUCKET_NAME_MAX, `a bucket name is ${BUCKET_NAME_MIN} to ${BUCKET_NAME_MAX} characters long`)
  .regex(
    BUCKET_NAME_PATTERN,
    'a bucket name has lower-case letters, digits and single "-" only, and starts and ends with a letter or digit (e.g. "user-uploads")',
  )
  .meta({
    description: `A label, unique in the organisation: ${BUCKET_NAME_MIN} to ${BUCKET_NAME_MAX} lower-case letters, digits and "-" (S3's bucket-name rules without dots). The store's real bucket name is generated from it (bucket.s3Name).`,
    example: 'user-uploads',
  });

export const CreateBucketRequest = z
  .object({
    name,
    projectId: z
      .uuid('a project ID in UUID format')
      .optional()
      .meta({ description: 'The project it belongs to; judged by your role there. The organisation’s when absent' }),
  })
  .strict()
  .meta({ id: 'CreateBucketRequest' });

export const BucketIdParams = z.object({ id: z.uuid('a bucket ID in UUID format') });

export const BucketListQuery = z
  .object({
    projectId: z.uuid('a project ID in UUID format').optional(),
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, 1_000_000).default(0),
  })
  .strict();

export const DeleteBucketQuery = z
  .object({
    force: z
      .enum(['true', 'false'], 'true or false')
      .optional()
      .transform((v) => v === 'true')
      .meta({
        description: 'true: delete every object first. Without it a bucket that holds objects is refused (409)',
      }),
  })
  .strict();

export const BucketUsage = z
  .object({
    objects: z.number().int(),
    bytes: z.number().int(),
    measuredAt: z.iso.datetime(),
    partial: z.boolean().meta({
      description:
        'true when the bucket holds more objects than one measurement lists (10,000): the figures are at least these',
    }),
  })
  .meta({ id: 'BucketUsage' });

export const Bucket = z
  .object({
    id: z.uuid(),
    name: z.string(),
    s3Name: z.string().meta({ description: 'The real bucket in the object store: what an S3 client names' }),
    projectId: z.string().nullable(),
    createdAt: z.iso.datetime(),
    usage: BucketUsage.optional().meta({
      description: 'What it holds (GET /buckets/{id} only), measured at most a minute ago',
    }),
  })
  .meta({ id: 'Bucket' });

export const BucketList = z
  .object({ buckets: Bucket.array(), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'BucketList' });

export const CreateCredentialRequest = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[\w .:@-]+$/, 'letters, digits, spaces and _ . : @ -')
      .optional()
      .meta({ description: 'A note of what the key is for' }),
  })
  .strict()
  .meta({ id: 'CreateBucketCredentialRequest' });

export const Credential = z
  .object({
    keyId: z.string().meta({ description: 'The key’s identifier: its access key ID' }),
    accessKeyId: z.string(),
    bucketId: z.uuid(),
    name: z.string().nullable(),
    kind: z.enum(['key', 'link']).meta({
      description: 'key: made with POST …/credentials; link: made for deploymentId’s link, revoked when it is unlinked',
    }),
    deploymentId: z.string().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'BucketCredential' });

export const NewCredential = Credential.extend({
  secretAccessKey: z.string().meta({ description: 'Shown this once: Slipway keeps nothing of it' }),
  endpoint: z.string().meta({ description: 'The object store’s S3 endpoint for this key' }),
  bucket: z.string().meta({ description: 'The real bucket name the key opens (and nothing else)' }),
  region: z.string(),
  forcePathStyle: z.boolean(),
}).meta({ id: 'NewBucketCredential' });

export const CredentialList = z.object({ credentials: Credential.array() }).meta({ id: 'BucketCredentialList' });

export const CredentialParams = z.object({
  id: z.uuid('a bucket ID in UUID format'),
  keyId: z
    .string()
    .regex(ACCESS_KEY_ID_PATTERN, 'an access key ID as POST …/credentials returned (SLW and 17 characters)'),
});

export const LinkRequest = z
  .object({ deploymentId: z.uuid('a deployment ID in UUID format') })
  .strict()
  .meta({ id: 'BucketLinkRequest' });

export const LinkParams = z.object({
  id: z.uuid('a bucket ID in UUID format'),
  deploymentId: z.uuid('a deployment ID in UUID format'),
});

export const Link = z
  .object({ deploymentId: z.string(), env: z.string().array().meta({ description: 'The variables it gives' }) })
  .meta({ id: 'BucketLink' });

export const LinkList = z.object({ links: Link.array() }).meta({ id: 'BucketLinkList' });

export const Linked = z
  .object({
    bucket: Bucket,
    deploymentId: z.string(),
    env: z.string().array(),
    release: z.unknown().meta({ description: 'The new release shipping the change, as a redeploy answers' }),
  })
  .meta({ id: 'BucketLinked' });
