import type { IncomingMessage, ServerResponse } from 'node:http';

import type { Request, Response } from 'express';
import { pinoHttp } from 'pino-http';

import type { Logger } from '@shared/logger';

import { assignRequestId } from './request-id';

/** The route pattern a request matched (`/compat/deployments/:id`), recorded by mountRoutes for the access log. */
export const ROUTE_LOCAL = 'route';

/**
 * One line per request, written when the response is finished or the connection closes: method, route pattern
 * (never the query string, which can carry e-mail addresses), status, duration, request ID and organisation.
 * Headers are never logged, so a token or an Authorization header cannot reach the log.
 */
export function accessLog(log: Logger) {
  const line = (req: IncomingMessage, res: ServerResponse, responseTime: number) => {
    const r = req as Request;
    const locals = (res as Response).locals as Record<string, unknown> | undefined;
    return {
      method: r.method,
      route: (locals?.[ROUTE_LOCAL] as string | undefined) ?? null,
      // Only when no route matched: the path without its query, so an unknown URL can still be found.
      ...(locals?.[ROUTE_LOCAL] ? {} : { path: (r.originalUrl ?? r.url ?? '').split('?')[0] }),
      status: res.statusCode,
      durationMs: responseTime,
      orgId: r.principal?.org._id ?? (locals?.sellerId as string | undefined) ?? null,
    };
  };
  const message = (l: ReturnType<typeof line>) => `${l.method} ${l.route ?? l.path} ${l.status}`;
  return pinoHttp({
    logger: log,
    genReqId: assignRequestId,
    quietReqLogger: true,
    quietResLogger: true,
    customAttributeKeys: { reqId: 'requestId', responseTime: 'durationMs' },
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessObject: (req, res, val: { durationMs: number }) => line(req, res, val.durationMs),
    customErrorObject: (req, res, _err, val: { durationMs: number }) => line(req, res, val.durationMs),
    customSuccessMessage: (req, res, ms) => message(line(req, res, ms)),
    customErrorMessage: (req, res) => message(line(req, res, 0)),
  });
}
