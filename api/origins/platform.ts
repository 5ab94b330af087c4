import { Router } from 'express';

import { AppError } from '../../shared/errors';
import type { IdentityService } from '../../shared/identity/service';
import type { Permission } from '../../shared/permissions';
import type { Vault } from '../../shared/secrets/vault';
import { authenticate, principalOf, requirePermission } from '../middleware/auth';
import { consume, rateLimit, type RateLimiters } from '../middleware/rate-limit';
import { mountRoutes, type RouteDef } from '../routes';
import type { SalesService } from '../sales/service';
import { salesRoutes } from './sales/routes';
import { secretRoutes } from './secrets/routes';
import { tokenRoutes } from './tokens/routes';

export interface PlatformDeps {
  identity: IdentityService;
  sales: SalesService;
  vault: Vault;
  limiters: RateLimiters;
}

/** Every platform route; later platform features add their route sets here. */
export function platformRoutes(deps: PlatformDeps): RouteDef[] {
  const can = (permission: Permission) => requirePermission(deps.identity, permission);
  return [
    ...tokenRoutes({ identity: deps.identity, can }),
    ...salesRoutes({ sales: deps.sales, can }),
    ...secretRoutes({ vault: deps.vault, can }),
  ];
}

/** The platform origin: bearer token, then 100 requests / 15 min per token (per address before a token is known). */
export function platformRouter(deps: PlatformDeps): Router {
  const router = Router();
  router.use(authenticate(deps.identity, (req, res) => consume(deps.limiters.platform, `ip:${req.ip}`, res)));
  router.use(rateLimit(deps.limiters.platform, (req) => `token:${principalOf(req).token._id}`));
  router.use(mountRoutes(platformRoutes(deps)));
  router.use((req, _res, next) =>
    next(new AppError('INVALID_REQUEST', `No route ${req.method} ${req.originalUrl}; see /openapi.json.`, {}, 404)),
  );
  return router;
}
