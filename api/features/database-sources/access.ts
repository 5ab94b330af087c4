import type { Request } from 'express';

import { AppError } from '@shared/errors';

import { type CanOptions, principalOf } from '../../http/auth';
import { sourceNotFound, type SourceService } from './service';

/**
 * `/database-sources/:id…`: the project the source belongs to decides with the caller's role there; another
 * organisation's source, or one of a project the caller cannot see, reads exactly as an unknown source.
 */
export const sourceProject = (sources: Pick<SourceService, 'get'>): CanOptions => ({
  project: (req: Request) =>
    sources.get(principalOf(req), String(req.params.id)).then(
      (s) => s.projectId ?? undefined,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'DATABASE_SOURCE_NOT_FOUND') return undefined;
        throw err;
      },
    ),
  notFound: (req) => sourceNotFound(String(req.params.id)),
});
