import type { Client } from '@temporalio/client';
import express, { type Express } from 'express';
import type { Db } from 'mongodb';
import swaggerUi from 'swagger-ui-express';

import type { AuditStore } from '../shared/audit/store';
import type { Authz } from '../shared/authz/authorize';
import type { GitSourceCheck } from '../shared/build/git-source';
import type { Config } from '../shared/config';
import { AppError } from '../shared/errors';
import type { IdentityService } from '../shared/identity/service';
import type { Logger } from '../shared/logger';
import type { Redis } from '../shared/redis';
import type { Vault } from '../shared/secrets/vault';
import type { BuilderDeps } from './features/builder/compose';
import type { DeploymentFollower } from './features/deployments/events';
import type { DeploymentObserver } from './features/deployments/observe';
import type { DeploymentService } from './features/deployments/service';
import type { DeploymentWaiter } from './features/deployments/wait';
import type { FeatureContext } from './features/feature';
import type { ProjectService } from './features/projects/service';
import type { SalesService } from './features/sales/service';
import type { UploadService } from './features/uploads/service';
import type { UserService } from './features/users/service';
import { accessLog } from './http/access-log';
import { requirePermission } from './http/auth';
import { compatErrors, fallbackErrors, platformErrors } from './http/errors';
import { buildOpenApi } from './http/openapi';
import { deployCreateLimit, rateLimit, type RateLimiters } from './http/rate-limit';
import { checkReadiness } from './http/readiness';
import { requestContext } from './http/request-id';
import { compatRouter, orgKey } from './origins/compat';
import { entitlementsRouter } from './origins/entitlements';
import { mcpRouter } from './origins/mcp';
import { platformRouter } from './origins/platform';

export interface AppDeps {
  config: Config;
  log: Logger;
  db: Db;
  redis: Redis;
  temporal: Client;
  limiters: RateLimiters;
  identity: IdentityService;
  /** The one access decision (shared/authz): scopes, org role, project role. */
  authz: Authz;
  /** The append-only audit trail every mutating route writes to (api/http/audit.ts). */
  auditTrail: AuditStore;
  deployments: DeploymentService;
  /** Releases, health, resource use and logs of a deployment (engine reads and recorded samples). */
  observe: DeploymentObserver;
  uploads: UploadService;
  sales: SalesService;
  /** The long-poll of a status read (`?wait=`). */
  waitForDeployment: DeploymentWaiter;
  /** Status changes and log lines from a cursor on (the events stream). */
  followDeployment: DeploymentFollower;
  vault: Vault;
  /** The rules a Git source is held to wherever one is named (a source deploy, a project, a builder push). */
  gitSource: GitSourceCheck;
  projects: ProjectService;
  users: UserService;
  /** The organisation's AI providers (keys sealed) and a client that calls them (the provider test). */
  aiProviders: BuilderDeps['aiProviders'];
  aiClient: BuilderDeps['aiClient'];
  /** The AI builder: sessions, files, checkpoints and shares; model turns (api/features/builder). */
  builder: BuilderDeps['builder'];
  builderTurns: BuilderDeps['builderTurns'];
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

  const ctx = featureContext(deps);
  const document = buildOpenApi(ctx);
  app.get('/openapi.json', (_req, res) => {
    res.json(document);
  });
  app.use('/docs', swaggerUi.serve, swaggerUi.setup(document, { customSiteTitle: 'Slipway API reference' }));

  app.use('/compat', compatRouter(ctx), compatErrors(deps.log));
  app.use('/platform', platformRouter(ctx), platformErrors(deps.log));
  app.use('/api/v1/entitlements', entitlementsRouter(ctx));
  app.use('/mcp', mcpRouter(deps));
  app.use((req, _res, next) => {
    next(new AppError('ROUTE_NOT_FOUND', `No route ${req.method} ${req.path}; see /openapi.json.`));
  });
  app.use(fallbackErrors(deps.log));
  return app;
}

/** The frame's middleware every feature builds its routes with. */
function featureContext(deps: AppDeps): FeatureContext {
  const { limiters } = deps;
  return {
    ...deps,
    can: (permission, opts) => requirePermission(deps.authz, permission, opts),
    limit: {
      compatReads: rateLimit(limiters.compatReads, orgKey),
      compatWrites: rateLimit(limiters.compatWrites, orgKey),
      compatUploads: rateLimit(limiters.compatUploads, orgKey),
      deployCreate: deployCreateLimit(limiters),
    },
  };
}
