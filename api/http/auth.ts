import { parseCookie } from 'cookie';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

import type { Authz } from '@shared/authz/authorize';
import { AppError } from '@shared/errors';
import type { IdentityService, Principal } from '@shared/identity/service';
import { CSRF_HEADER, csrfMatches, SAFE_METHODS, SESSION_COOKIE } from '@shared/identity/sessions';
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

/** The console session's secret, from its cookie (shared/identity/sessions.ts). */
export function sessionCookie(req: Request): string | undefined {
  const header = req.get('cookie');
  return header ? parseCookie(header)[SESSION_COOKIE] : undefined;
}

/**
 * The credential a request presents: its bearer token, or, where the origin takes them (`cookies`), the console
 * session's cookie. A bearer header wins, so an API client behind a browser is never mistaken for the console. A
 * change sent with the cookie must carry the session's CSRF token: a page of another origin can make the browser send
 * the cookie (were SameSite=Strict ever bypassed) but cannot read the token to send with it.
 */
function presented(req: Request, cookies: boolean): { token: string | undefined; csrfRefused: boolean } {
  const bearer = bearerToken(req);
  if (bearer || req.get('authorization') || !cookies) return { token: bearer, csrfRefused: false };
  const session = sessionCookie(req);
  if (!session) return { token: undefined, csrfRefused: false };
  return { token: session, csrfRefused: !SAFE_METHODS.has(req.method) && !csrfMatches(session, req.get(CSRF_HEADER)) };
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
  opts: { cookies?: boolean } = {},
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    let principal: Principal;
    try {
      const { token, csrfRefused } = presented(req, opts.cookies ?? false);
      principal = await identity.authenticate(token);
      if (csrfRefused)
        throw new AppError(
          'CSRF_REFUSED',
          `A change sent with the console's session cookie needs its CSRF token in the ${CSRF_HEADER} header (GET /platform/session gives it); API clients send "Authorization: Bearer svc_…" instead.`,
        );
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
