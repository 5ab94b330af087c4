import type { Client } from '@temporalio/client';
import express, { type Express } from 'express';
import type { Db } from 'mongodb';
import swaggerUi from 'swagger-ui-express';

import type { Config } from '../shared/config';
import { AppError } from '../shared/errors';
import type { IdentityService } from '../shared/identity/service';
import type { Logger } from '../shared/logger';
import type { Redis } from '../shared/redis';
import type { Vault } from '../shared/secrets/vault';
import { compatRouter, compatRoutes } from './compat/router';
import type { DeploymentService } from './deployments/service';
import { entitlementsRouter } from './entitlements/router';
import { accessLog } from './middleware/access-log';
import { compatErrors, fallbackErrors, platformErrors } from './middleware/errors';
import type { RateLimiters } from './middleware/rate-limit';
import { requestContext } from './middleware/request-id';
import { buildOpenApi } from './openapi';
import { platformRouter, platformRoutes } from './platform/router';
import { checkReadiness } from './readiness';
import type { SalesService } from './sales/service';
import type { UploadService } from './uploads/service';

export interface AppDeps {
  config: Config;
  log: Logger;
  db: Db;
  redis: Redis;
  temporal: Client;
  limiters: RateLimiters;
  identity: IdentityService;
  deployments: DeploymentService;
  uploads: UploadService;
  sales: SalesService;
  vault: Vault;
}

/** The composition root of the HTTP surface; `listen` lives in server.ts so tests can build it on their own services. */
export function buildApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  // First, so every request — refused, unknown or failed — has its ID and its access-log line.
  app.use(accessLog(deps.log), requestContext);
  app.use(express.json({ limit: '1mb' }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const problems = await checkReadiness({
      db: deps.db,
      redis: deps.redis,
      temporal: deps.temporal,
      namespace: deps.config.TEMPORAL_NAMESPACE,
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    });
    if (Object.keys(problems).length === 0) {
      res.json({ status: 'ready' });
      return;
    }
    // /readyz answers anyone who can reach it: driver and connection text goes to the log, the answer names parts.
    deps.log.warn({ problems }, 'not ready');
    const said = (part: string, why: string) => (part === 'worker' ? why : `${part} is not reachable; see the api log`);
    res.status(503).json({
      status: 'not ready',
      problems: Object.fromEntries(Object.entries(problems).map(([part, why]) => [part, said(part, why)])),
    });
  });

  const document = buildOpenApi({ compat: compatRoutes(deps), platform: platformRoutes(deps) });
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(document, { customSiteTitle: 'Slipway API reference' }));

  app.use('/compat', compatRouter(deps), compatErrors(deps.log));
  app.use('/platform', platformRouter(deps), platformErrors(deps.log));
  app.use('/api/v1/entitlements', entitlementsRouter(deps));
  // The lookup takes GET only; any other method is 405 with Allow, in the lookup's {error} shape.
  app.all('/api/v1/entitlements', (req, res, next) => {
    res.setHeader('Allow', 'GET, HEAD');
    next(new AppError('INVALID_REQUEST', `${req.method} is not allowed here; use GET.`, {}, 405));
  });
  app.use((req, _res, next) => {
    next(new AppError('INVALID_REQUEST', `No route ${req.method} ${req.path}; see /openapi.json.`, {}, 404));
  });
  app.use(fallbackErrors(deps.log));
  return app;
}
