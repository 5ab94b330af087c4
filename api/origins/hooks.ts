import express, { type ErrorRequestHandler, Router } from 'express';

import { AppError } from '@shared/errors';

import type { Core } from '../core';
import { platformErrors } from '../http/errors';
import { limitKey, rateLimit } from '../http/rate-limit';
import { mountRoutes, type RouteDef } from '../http/routes';

/** A push event needs its ref and head commit only; GitHub's own cap (25 MB) is far more than that. */
export const HOOK_BODY_LIMIT = '1mb';

/**
 * The hooks origin: Git hosts' webhook deliveries. No token: each route authenticates its request by a signature over
 * the raw body, so the body is kept as bytes (any content type) and never parsed here. Every delivery, signed or not,
 * spends its address's budget first; a body past the limit is 413. Errors are the platform's `{status, message}`.
 */
export function hooksRouter(ctx: Pick<Core, 'limiters' | 'log'>, routes: RouteDef[]): Router {
  const router = Router();
  router.use(rateLimit(ctx.limiters.hooks, limitKey.address));
  router.use(express.raw({ type: () => true, limit: HOOK_BODY_LIMIT }));
  router.use(mountRoutes(routes));
  router.use((req, _res, next) =>
    next(new AppError('ROUTE_NOT_FOUND', `No route ${req.method} ${req.originalUrl}; see /openapi.json.`)),
  );
  const tooLarge: ErrorRequestHandler = (err, _req, _res, next) => {
    const type = (err as { type?: string } | undefined)?.type;
    next(
      type === 'entity.too.large'
        ? new AppError(
            'PAYLOAD_TOO_LARGE',
            `The delivery's body is over ${HOOK_BODY_LIMIT}: a push event needs far less.`,
          )
        : err,
    );
  };
  router.use(tooLarge, platformErrors(ctx.log));
  return router;
}
