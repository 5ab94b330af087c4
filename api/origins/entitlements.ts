import { type RequestHandler, Router } from 'express';

import { AppError } from '@shared/errors';
import { hashToken } from '@shared/identity/tokens';

import type { Core } from '../core';
import { entitlementErrors } from '../http/errors';
import { consume, limitKey } from '../http/rate-limit';
import { mountRoutes, type RouteDef } from '../http/routes';

/** The entitlement lookup origin: authenticated by a seller API key, not an access token; errors are `{error}`. */
export function entitlementsRouter(ctx: Pick<Core, 'sellerOfKey' | 'limiters' | 'log'>, routes: RouteDef[]): Router {
  const router = Router();
  const byKey: RequestHandler = async (req, res, next) => {
    try {
      const key = req.get('authorization')?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
      const orgId = key ? await ctx.sellerOfKey(key) : undefined;
      if (!key || !orgId) {
        // A wrong key spends its address's budget of the same size, as refused tokens do on the other origins.
        await consume(ctx.limiters.entitlements, limitKey.address(req), res);
        throw new AppError('INVALID_TOKEN', 'Missing or wrong seller API key: send "Authorization: Bearer <API_KEY>".');
      }
      // Per key, as the interface says, not per seller: by the key's hash, so a rotated key starts a fresh budget and two
      // keys never share one, and the key itself never becomes part of a Redis key.
      await consume(ctx.limiters.entitlements, `key:${hashToken(key)}`, res);
      res.locals.sellerId = orgId;
      next();
    } catch (err) {
      next(err);
    }
  };
  // Only the lookup (GET) asks for a key: another method is a 405 with Allow, whoever asks.
  router.get('/', byKey);
  router.use(mountRoutes(routes));
  router.use(entitlementErrors(ctx.log));
  return router;
}
