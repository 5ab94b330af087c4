import type { NextFunction, Request, RequestHandler, Response } from 'express';

import type { Authz } from '@shared/authz/authorize';
import type { AppError } from '@shared/errors';
import type { IdentityService, Principal } from '@shared/identity/service';
import type { Permission } from '@shared/permissions';

import { noteAudit } from './audit';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

export function bearerToken(req: Request): string | undefined {
  return req.get('authorization')?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
}

/**
 * Resolves the bearer token on every request of an origin; failures go to that origin's renderer, after
 * `onFailure` counts the attempt (against a per-address budget). When `onFailure` refuses, its refusal (a 429 with
 * Retry-After) is the answer: a client hammering with bad tokens is told to stop, not handed 401s forever.
 * A valid token is never refused by that budget, so one client's bad tokens cannot lock out others behind the same
 * address; tokens carry 256 random bits, so the budget caps the cost of bad traffic, not a guessing attack.
 */
export function authenticate(
  identity: Pick<IdentityService, 'authenticate'>,
  onFailure?: (req: Request, res: Response) => Promise<void>,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    let principal: Principal;
    try {
      principal = await identity.authenticate(bearerToken(req));
    } catch (err) {
      try {
        await onFailure?.(req, res);
      } catch (refusal) {
        return next(refusal);
      }
      return next(err);
    }
    req.principal = principal;
    next();
  };
}

/** Where a route finds the project its resource lives in: a path parameter, a body field, a record's field. */
export type ProjectOf = (req: Request) => string | undefined | Promise<string | undefined>;

export interface CanOptions {
  /** The project the request touches; undefined (or no resolver) means a resource of the organisation. */
  project?: ProjectOf;
  /** The route's own not-found for a project the caller cannot see (e.g. DEPLOYMENT_NOT_FOUND for its deployment). */
  notFound?: (req: Request) => AppError;
}

/** Resolvers for the usual places a project ID sits; only strings count, anything else is "no project". */
export const projectFrom = {
  param:
    (name: string): ProjectOf =>
    (req) => {
      const v: unknown = req.params[name];
      return typeof v === 'string' && v ? v : undefined;
    },
  /** Read before validation (authorization comes first), so only a string is taken. */
  body:
    (field: string): ProjectOf =>
    (req) => {
      const v: unknown = (req.body as Record<string, unknown> | undefined)?.[field];
      return typeof v === 'string' && v ? v : undefined;
    },
};

/**
 * The route's access check (shared/authz): scopes, org role and, when the route names its project, project role.
 * The project it resolved is noted for the audit event.
 */
export function requirePermission(
  authz: Pick<Authz, 'authorize'>,
  permission: Permission,
  opts: CanOptions = {},
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const projectId = await opts.project?.(req);
      if (projectId !== undefined) noteAudit(res, { projectId });
      await authz.authorize(principalOf(req), permission, {
        projectId,
        ...(opts.notFound ? { notFound: () => opts.notFound!(req) } : {}),
      });
      next();
    } catch (err) {
      next(err);
    }
  };
}

export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('route mounted without authenticate()');
  return req.principal;
}
