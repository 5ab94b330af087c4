import type { NextFunction, Request, RequestHandler, Response } from 'express';

import type { IdentityService, Principal } from '../../shared/identity';
import type { Permission } from '../../shared/permissions';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
  }
}

/** Resolves the bearer token on every request of an origin; failures go to that origin's renderer. */
export function authenticate(identity: Pick<IdentityService, 'authenticate'>): RequestHandler {
  return async (req: Request, _res: Response, next: NextFunction) => {
    try {
      const header = req.get('authorization');
      const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
      req.principal = await identity.authenticate(match?.[1]);
      next();
    } catch (err) {
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
