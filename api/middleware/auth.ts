import type { NextFunction, Request, RequestHandler, Response } from 'express';

import type { IdentityService, Principal } from '../../shared/identity';
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
 * Resolves the bearer token on every request of an origin; failures go to that origin's renderer,
 * after `onFailure` (which may, say, count the attempt against a per-address rate limit).
 */
export function authenticate(
  identity: Pick<IdentityService, 'authenticate'>,
  onFailure?: (req: Request, res: Response) => Promise<void>,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      req.principal = await identity.authenticate(bearerToken(req));
      next();
    } catch (err) {
      await onFailure?.(req, res).catch(() => undefined);
      next(err);
    }
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
