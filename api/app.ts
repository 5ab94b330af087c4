import express, { type Express } from 'express';
import swaggerUi from 'swagger-ui-express';

import { AppError } from '@shared/errors';

import type { Core } from './core';
import type { ComposedFeatures } from './features/feature';
import { accessLog } from './http/access-log';
import { consoleRouter } from './http/console';
import { compatErrors, fallbackErrors, platformErrors } from './http/errors';
import { buildOpenApi } from './http/openapi';
import { checkReadiness } from './http/readiness';
import { requestContext } from './http/request-id';
import { compatRouter } from './origins/compat';
import { entitlementsRouter } from './origins/entitlements';
import { hooksRouter } from './origins/hooks';
import { mcpRouter } from './origins/mcp';
import { platformRouter } from './origins/platform';

/** What the app serves: the shared core, and the routes and tools of the composed features (api/compose.ts). */
export interface AppParts {
  core: Core;
  features: ComposedFeatures;
}

/** The composition root of the HTTP surface; `listen` lives in server.ts so tests can build it on their own services. */
export function buildApp({ core, features }: AppParts): Express {
  const app = express();
  app.disable('x-powered-by');
  // Behind the router, the client's address (rate limits per address, audit) is the one the router forwards.
  if (core.config.TRUST_PROXY)
    app.set(
      'trust proxy',
      core.config.TRUST_PROXY.split(',').map((p) => p.trim()),
    );
  // First, so every request — refused, unknown or failed — has its ID and its access-log line.
  app.use(accessLog(core.log), requestContext);
  // Before the JSON parser: a webhook's signature is over the raw bytes, which the parser would consume.
  app.use('/hooks', hooksRouter(core, features.routes.hooks));
  app.use(express.json({ limit: '1mb' }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const problems = await checkReadiness({
      db: core.db,
      redis: core.redis,
      temporal: core.temporal,
      namespace: core.config.TEMPORAL_NAMESPACE,
      taskQueue: core.config.TEMPORAL_TASK_QUEUE,
    });
    if (Object.keys(problems).length === 0) {
      res.json({ status: 'ready' });
      return;
    }
    // /readyz answers anyone who can reach it: driver and connection text goes to the log, the answer names parts.
    core.log.warn({ problems }, 'not ready');
    const said = (part: string, why: string) => (part === 'worker' ? why : `${part} is not reachable; see the api log`);
    res.status(503).json({
      status: 'not ready',
      problems: Object.fromEntries(Object.entries(problems).map(([part, why]) => [part, said(part, why)])),
    });
  });

  const { routes, tools } = features;
  const document = buildOpenApi(routes);
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(document, { customSiteTitle: 'Slipway API reference' }));

  app.use('/compat', compatRouter(core, routes.compat), compatErrors(core.log));
  app.use('/platform', platformRouter(core, routes.platform), platformErrors(core.log));
  app.use('/api/v1/entitlements', entitlementsRouter(core, routes.entitlements));
  app.use('/mcp', mcpRouter(core, tools));
  const webConsole = consoleRouter(core.config.CONSOLE_DIR);
  if (webConsole) app.use(webConsole);
  app.use((req, _res, next) => {
    next(new AppError('ROUTE_NOT_FOUND', `No route ${req.method} ${req.path}; see /openapi.json.`));
  });
  app.use(fallbackErrors(core.log));
  return app;
}
