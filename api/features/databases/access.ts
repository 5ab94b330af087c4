import type { Request } from 'express';

import { AppError } from '@shared/errors';

import { type CanOptions, principalOf } from '../../http/auth';
import { databaseNotFound, type DatabaseService } from './service';

/**
 * `/databases/:id…`: the project the database belongs to decides with the caller's role there; a database of another
 * organisation, or of a project the caller cannot see, is reported exactly as an unknown database.
 */
export const databaseProject = (databases: Pick<DatabaseService, 'get'>): CanOptions => ({
  project: (req: Request) =>
    databases.get(principalOf(req), String(req.params.id)).then(
      (d) => d.projectId ?? undefined,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'DATABASE_NOT_FOUND') return undefined;
        throw err;
      },
    ),
  notFound: (req) => databaseNotFound(String(req.params.id)),
});
