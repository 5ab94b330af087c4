import { type RequestHandler, Router } from 'express';
import type { z } from 'zod';

import { AppError } from '@shared/errors';

import { ROUTE_LOCAL } from './access-log';
import { type AuditedRoute, type AuditRecorder, type AuditSpec, auditTrail } from './audit';
import { handle, type Parsed, type Schemas } from './validate';

type Method = AuditedRoute['method'];

/**
 * One route, described once: the Express router and the OpenAPI document are both built from it,
 * so the schemas that validate a request are the ones the document publishes.
 */
export interface RouteDef<S extends Schemas = Schemas> {
  method: Method;
  /** Express syntax (`/deployments/:id`); the OpenAPI path is derived from it. */
  path: string;
  summary: string;
  description?: string;
  tags: string[];
  request: S;
  /** A multipart body, documented as such; its parser runs in `before`. */
  multipart?: { field: string; description: string };
  /**
   * A body read as raw bytes (its signature is over them) and parsed by the handler: documented with this schema as
   * JSON, never validated before the handler has verified it.
   */
  rawBody?: { schema: z.ZodType; description: string };
  /** Middleware after authentication and before validation: rate limit, permission, body parsers. */
  before: RequestHandler[];
  /** `contentType` for an answer that is not JSON (an event stream). */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  /** The audit event of a mutating route, where deriving it from method and path is wrong (api/http/audit.ts). */
  audit?: AuditSpec;
  handler: (
    input: Parsed<S>,
    req: Parameters<RequestHandler>[0],
    res: Parameters<RequestHandler>[1],
  ) => Promise<void> | void;
}

export const route = <S extends Schemas>(def: RouteDef<S>): RouteDef => def as unknown as RouteDef;

/** `audit`: every mutating route appends its audit event (the entitlement lookup, all reads, has none). */
export function mountRoutes(routes: RouteDef[], opts: { audit?: AuditRecorder } = {}): Router {
  const router = Router();
  // Before the routes: `DELETE /tokens/current` must be a 405 of that path, not `/tokens/{id}` refusing "current".
  router.use(methodNotAllowed(routes));
  for (const r of routes) {
    // The pattern, not the URL, goes to the access log: one line shape per route, and no IDs to scrub.
    const pattern: RequestHandler = (req, res, next) => {
      res.locals[ROUTE_LOCAL] = req.baseUrl + r.path;
      next();
    };
    const audit = opts.audit && auditTrail(opts.audit, r);
    router[r.method](r.path, pattern, ...(audit ? [audit] : []), ...r.before, handle(r.request, r.handler));
  }
  return router;
}

/**
 * A path the origin serves, asked with a method it does not: 405 with the methods it does take (Allow), rather
 * than a 404 that says the path does not exist, or a parameter route of the same shape refusing the path as an ID.
 * Other requests go on to the routes, and unknown paths to the origin's 404.
 */
function methodNotAllowed(routes: RouteDef[]): RequestHandler {
  const patterns = routes.map((r) => ({
    method: r.method.toUpperCase(),
    regex: new RegExp(`^${r.path.replace(/:(\w+)/g, '[^/]+')}/?$`),
    params: (r.path.match(/:\w+/g) ?? []).length,
  }));
  return (req, res, next) => {
    const matching = patterns.filter((p) => p.regex.test(req.path));
    // The path as documented: `/tokens/current` is its own resource, not `/tokens/{id}` with id "current".
    const fewest = Math.min(...matching.map((p) => p.params));
    const allowed = [...new Set(matching.filter((p) => p.params === fewest).map((p) => p.method))];
    if (allowed.length === 0 || allowed.includes(req.method === 'HEAD' ? 'GET' : req.method)) return next();
    if (allowed.includes('GET')) allowed.push('HEAD');
    res.setHeader('Allow', allowed.join(', '));
    next(new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allowed.join(', ')}.`));
  };
}

export const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');
