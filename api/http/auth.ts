import type { NextFunction, Request, RequestHandler, Response } from 'express';

import type { IdentityService, Principal } from '../../shared/identity/service';
import type { Permission } from '../../shared/permissions';

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

export function requirePermission(
  identity: Pick<IdentityService, 'authorize'>,
  permission: Permission,
): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    try {
      identity.authorize(principalOf(req), permission);
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
