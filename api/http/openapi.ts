import { OpenApiGeneratorV31, OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';

import { SESSION_COOKIE } from '@shared/identity/sessions';
import { permissionsMarkdown } from '@shared/permissions';

import { openApiPath, type RouteDef } from './routes';
import { ErrorResponse, PlatformError } from './shapes';

interface Origin {
  prefix: string;
  routes: RouteDef[];
  errorSchema: z.ZodType;
  errorStatuses: Record<number, string>;
  /** Statuses every route of the origin can answer; others (404, 409…) only where the route says so. */
  everyRoute: number[];
  /** An origin whose routes authenticate each request themselves (a signature): no bearer token. */
  noToken?: boolean;
  /** An origin that also takes the web console's session cookie. */
  cookies?: boolean;
}

const COMPAT_ERRORS: Record<number, string> = {
  400: 'INVALID_REQUEST: the body, query or path failed validation (see details.issues)',
  401: 'INVALID_TOKEN or TOKEN_EXPIRED',
  403: 'INSUFFICIENT_SCOPE (also a change made with the console cookie without X-CSRF-Token) or PROVIDER_NOT_ALLOWED',
  404: 'DEPLOYMENT_NOT_FOUND or PROJECT_NOT_FOUND (also for another organisation’s IDs)',
  409: 'DUPLICATE_REQUEST: the requestId was used before; details.deploymentId names the first deployment',
  429: 'RATE_LIMIT_EXCEEDED (Retry-After says when) or QUOTA_EXCEEDED',
  500: 'INTERNAL_ERROR: retry with backoff; details.requestId identifies the failure',
};

const PLATFORM_ERRORS: Record<number, string> = {
  400: 'Invalid request, or blocked by a safety check',
  401: 'Missing, malformed, revoked or expired token',
  403: 'The token or the user lacks the permission, or a change made with the console cookie lacks X-CSRF-Token',
  404: 'Not found, or not in your organisation',
  409: 'Conflicts with what exists (a name or requestId already used)',
  429: 'Rate limited; Retry-After says when',
  500: 'Server error; retry with backoff. The message names the request ID',
};

/**
 * A stable operation ID from the origin, method and path (`compat_get_deployments_id`), so clients and agents
 * generated from the document get the same names release after release without anyone naming them by hand.
 */
export function operationIdOf(prefix: string, r: Pick<RouteDef, 'method' | 'path'>): string {
  const origin = prefix.split('/').filter(Boolean).join('_');
  const words = r.path
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/^:/, '').replace(/[^A-Za-z0-9]+/g, '_'));
  return [origin, r.method, ...words].join('_');
}

/** The error statuses a route can answer: the origin's common ones, 404 where a path names a resource, its own. */
function errorStatusesOf(origin: Origin, r: RouteDef): number[] {
  const own = Object.keys(r.responses)
    .map(Number)
    .filter((s) => s >= 400);
  const resource = r.path.includes(':') ? [404] : [];
  return [...new Set([...origin.everyRoute, ...resource, ...own])].sort();
}

/** Access control, stated once here and generated from the table the checks use (shared/permissions.ts). */
const ACCESS_CONTROL = [
  '## Access control',
  'A request needs its permission in the token’s scopes AND in the user’s organisation role AND, for a resource ' +
    'inside a project, in the user’s project role. Organisation owners and admins act as admins of every project. ' +
    'A developer holds project.update, project.delete and project.members.manage only in projects where their ' +
    'project role grants them (“in projects”); an org viewer stays read-only whatever their project role.',
  '',
  permissionsMarkdown(),
  '',
  '- A resource of another organisation, or in a project you are not a member of (unless you are an org owner or ' +
    'admin), answers 404 as if it did not exist; never 403.',
  '- A permission you lack answers 403 INSUFFICIENT_SCOPE; the message says what is missing (a token scope, the ' +
    'org role or the project role).',
  '- A deployment of no project needs the organisation-level permission only.',
  '- Lists show only what you can see: below org admin, deployments and projects of projects you are not a member ' +
    'of are left out (deployments of no project are listed for every role that may read deployments).',
  '- GET /platform/tokens/current needs no permission: it tells a token what it may do and its remaining budgets.',
  '- Every mutating call (POST, PUT, PATCH, DELETE) of either API is recorded in the audit trail ' +
    '(GET /platform/audit, audit.read) with its outcome: success, failure, or denied (403 and 404). Events hold ' +
    'no request or response body, so no secret value.',
].join('\n');

const RATE_HEADERS = {
  'X-RateLimit-Limit': { description: 'Requests allowed in the window', schema: { type: 'integer' as const } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window', schema: { type: 'integer' as const } },
  'X-RateLimit-Reset': { description: 'When the window resets, Unix seconds', schema: { type: 'integer' as const } },
};

/**
 * The OpenAPI 3.1.0 document, generated from the same route definitions (and zod schemas) the routers mount: each
 * origin's routes, as the composed features give them (api/compose.ts).
 */
export function buildOpenApi(routes: Record<'compat' | 'platform' | 'entitlements' | 'hooks', RouteDef[]>) {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    description: 'An access token, `svc_…`',
  });
  // The web console's session (POST /platform/session): accepted by /platform and /compat; changes made with it carry
  // X-CSRF-Token. API clients use bearerAuth.
  const consoleSession = registry.registerComponent('securitySchemes', 'consoleSession', {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description:
      'The web console’s session cookie, from POST /platform/session; every change made with it sends the session’s CSRF token as X-CSRF-Token (else 403 CSRF_REFUSED)',
  });
  const list: Origin[] = [
    {
      prefix: '/compat',
      routes: routes.compat,
      errorSchema: ErrorResponse,
      errorStatuses: COMPAT_ERRORS,
      everyRoute: [400, 401, 403, 429, 500],
      cookies: true,
    },
    {
      prefix: '/platform',
      routes: routes.platform,
      errorSchema: PlatformError,
      errorStatuses: PLATFORM_ERRORS,
      // The interface: every platform operation answers 400, 401, 403, 404 and 429.
      everyRoute: [400, 401, 403, 404, 429, 500],
      cookies: true,
    },
    {
      prefix: '/api/v1/entitlements',
      routes: routes.entitlements,
      errorSchema: z.object({ error: z.string() }),
      errorStatuses: {},
      everyRoute: [],
    },
    {
      prefix: '/hooks',
      routes: routes.hooks,
      errorSchema: PlatformError,
      errorStatuses: PLATFORM_ERRORS,
      everyRoute: [400, 429, 500],
      noToken: true,
    },
  ];
  for (const origin of list) {
    const compat = origin.prefix === '/compat';
    for (const r of origin.routes) {
      const responses: Record<string, object> = {};
      for (const [status, res] of Object.entries(r.responses)) {
        if (Number(status) >= 400) continue;
        responses[status] = {
          description: res.description,
          ...(compat ? { headers: RATE_HEADERS } : {}),
          ...(res.schema ? { content: { [res.contentType ?? 'application/json']: { schema: res.schema } } } : {}),
        };
      }
      for (const code of errorStatusesOf(origin, r)) {
        const status = String(code);
        const description = r.responses[code]?.description ?? origin.errorStatuses[code] ?? 'Error';
        const retry =
          status === '429'
            ? { 'Retry-After': { description: 'Seconds to wait', schema: { type: 'integer' as const } } }
            : {};
        responses[status] = {
          description,
          headers: { ...(compat ? RATE_HEADERS : {}), ...retry },
          content: { 'application/json': { schema: origin.errorSchema } },
        };
      }
      const body = r.request.body
        ? {
            body: {
              // A body that may be `{}` may be left out (the parser reads a missing body as `{}`): the interface's
              // "optional JSON object".
              required: !r.request.body.safeParse({}).success,
              content: { 'application/json': { schema: r.request.body } },
            },
          }
        : r.rawBody
          ? {
              body: {
                required: true,
                description: r.rawBody.description,
                content: { 'application/json': { schema: r.rawBody.schema } },
              },
            }
          : r.multipart
            ? {
                body: {
                  required: true,
                  content: {
                    'multipart/form-data': {
                      schema: {
                        type: 'object' as const,
                        required: [r.multipart.field],
                        // The parser refuses any other part.
                        additionalProperties: false,
                        properties: {
                          [r.multipart.field]: {
                            type: 'string' as const,
                            format: 'binary',
                            description: r.multipart.description,
                          },
                        },
                      },
                    },
                  },
                },
              }
            : {};
      registry.registerPath({
        method: r.method,
        path: origin.prefix + (r.path === '/' ? '' : openApiPath(r.path)),
        operationId: operationIdOf(origin.prefix, r),
        summary: r.summary,
        description: r.description,
        tags: r.tags,
        security: origin.noToken
          ? []
          : [{ [bearer.name]: [] }, ...(origin.cookies ? [{ [consoleSession.name]: [] }] : [])],
        request: {
          ...(r.request.params ? { params: r.request.params as z.ZodObject } : {}),
          ...(r.request.headers ? { headers: r.request.headers as z.ZodObject } : {}),
          ...(r.request.query ? { query: r.request.query as z.ZodObject } : {}),
          ...body,
        },
        responses: responses as never,
      });
    }
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Slipway',
      version: '1.1.0',
      description:
        'Deploy containers from an image, a Git repository or an uploaded zip, then poll, read logs and destroy. ' +
        'Compatibility API under /compat (ErrorResponse errors, X-RateLimit-* headers on every response); platform API under /platform ' +
        '({status:"success", data} bodies, PlatformError errors). Rate limits: compat deploy+delete 20/hour/org, uploads 20/hour/org, ' +
        'reads 60/min/org; platform 100/15 min per token.\n\n' +
        ACCESS_CONTROL,
    },
    servers: [{ url: '/' }],
  });
}
