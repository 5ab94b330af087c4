import type { Request } from 'express';

import { AppError } from '@shared/errors';

import { type CanOptions, principalOf } from '../../http/auth';
import { bucketNotFound, type BucketService } from './service';

/**
 * `/buckets/:id…`: the project the bucket belongs to decides with the caller's role there; a bucket of another
 * organisation, or of a project the caller cannot see, is reported exactly as an unknown bucket.
 */
export const bucketProject = (buckets: Pick<BucketService, 'get'>): CanOptions => ({
  project: (req: Request) =>
    buckets.get(principalOf(req), String(req.params.id)).then(
      (b) => b.projectId ?? undefined,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'BUCKET_NOT_FOUND') return undefined;
        throw err;
      },
    ),
  notFound: (req) => bucketNotFound(String(req.params.id)),
});
