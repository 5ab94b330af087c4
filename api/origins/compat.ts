import { Router } from 'express';

import { AppError } from '@shared/errors';

import type { Core } from '../core';
import { authenticate } from '../http/auth';
import { consume, limitKey, rateLimit } from '../http/rate-limit';
import { mountRoutes, type RouteDef } from '../http/routes';

/**
 * The compatibility API: every request is authenticated first; a refused token still counts against a per-address
 * budget, so 401s carry X-RateLimit-* too. Budgets are per route (reads, writes, uploads), set by each feature.
 */
export function compatRouter(
  ctx: Pick<Core, 'identity' | 'limiters' | 'auditTrail' | 'log'>,
  routes: RouteDef[],
): Router {
  const router = Router();
  router.use(
    authenticate(ctx.identity, (req, res) => consume(ctx.limiters.compatAnonymous, limitKey.address(req), res), {
      cookies: true,
    }),
  );
  router.use(mountRoutes(routes, { audit: { store: ctx.auditTrail, log: ctx.log, origin: 'compat' } }));
  // An unknown route still spends a read, so its 404 carries the X-RateLimit-* headers like every compat response.
  router.use(rateLimit(ctx.limiters.compatReads, limitKey.org), (req, _res, next) =>
    next(new AppError('ROUTE_NOT_FOUND', `No route ${req.method} ${req.originalUrl}; see /openapi.json.`)),
  );
  return router;
}
