import { Router } from 'express';

import { AppError } from '@shared/errors';

import type { Core } from '../core';
import { authenticate } from '../http/auth';
import { consume, limitKey, rateLimit } from '../http/rate-limit';
import { mountRoutes, type RouteDef } from '../http/routes';

/** The platform origin: bearer token, then 100 requests / 15 min per token (per address before a token is known). */
export function platformRouter(
  ctx: Pick<Core, 'identity' | 'limiters' | 'auditTrail' | 'log'>,
  routes: RouteDef[],
): Router {
  const router = Router();
  router.use(
    authenticate(ctx.identity, (req, res) => consume(ctx.limiters.platformRefused, limitKey.address(req), res), {
      cookies: true,
    }),
  );
  router.use(rateLimit(ctx.limiters.platform, limitKey.token));
  router.use(mountRoutes(routes, { audit: { store: ctx.auditTrail, log: ctx.log, origin: 'platform' } }));
  router.use((req, _res, next) =>
    next(new AppError('ROUTE_NOT_FOUND', `No route ${req.method} ${req.originalUrl}; see /openapi.json.`)),
  );
  return router;
}
