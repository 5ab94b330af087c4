import { type ErrorRequestHandler, type RequestHandler, Router } from 'express';

import { AppError } from '../../shared/errors';
import { hashToken } from '../../shared/identity/tokens';
import type { Logger } from '../../shared/logger';
import { toAppError } from '../middleware/errors';
import { consume, type RateLimiters } from '../middleware/rate-limit';
import { handle } from '../middleware/validate';
import { EntitlementsQuery } from '../platform/sales/schemas';
import type { SalesService } from '../sales/service';

/** GET /api/v1/entitlements?email=…, authenticated by the seller API key; errors are `{error}`. */
export function entitlementsRouter(deps: { sales: SalesService; limiters: RateLimiters; log: Logger }): Router {
  const router = Router();
  const byKey: RequestHandler = async (req, res, next) => {
    try {
      const key = req.get('authorization')?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
      const orgId = key ? await deps.sales.sellerOfKey(key) : undefined;
      if (!key || !orgId) {
        // A wrong key spends its address's budget of the same size, as refused tokens do on the other origins.
        await consume(deps.limiters.entitlements, `ip:${req.ip}`, res);
        throw new AppError('INVALID_TOKEN', 'Missing or wrong seller API key: send "Authorization: Bearer <API_KEY>".');
      }
      // Per key, as the spec says, not per seller: by the key's hash, so a rotated key starts a fresh budget and two
      // keys never share one, and the key itself never becomes part of a Redis key.
      await consume(deps.limiters.entitlements, `key:${hashToken(key)}`, res);
      res.locals.sellerId = orgId;
      next();
    } catch (err) {
      next(err);
    }
  };
  router.get(
    '/',
    byKey,
    handle({ query: EntitlementsQuery }, async ({ query }, _req, res) => {
      res.json({ entitlements: await deps.sales.entitlements(res.locals.sellerId as string, query.email) });
    }),
  );
  const errors: ErrorRequestHandler = (err, _req, res, _next) => {
    const e = toAppError(err, deps.log);
    res.status(e.status).json({ error: e.message });
  };
  router.use(errors);
  return router;
}
