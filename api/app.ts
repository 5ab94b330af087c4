import type { Client } from '@temporalio/client';
import express, { type Express } from 'express';
import type { Db } from 'mongodb';

import type { Config } from '../shared/config';
import type { IdentityService } from '../shared/identity';
import type { Logger } from '../shared/logger';
import { compatRouter } from './compat/router';
import type { DeploymentService } from './deployments/service';
import { compatErrors } from './middleware/errors';
import { checkReadiness } from './readiness';

export interface AppDeps {
  config: Config;
  log: Logger;
  db: Db;
  temporal: Client;
  identity: IdentityService;
  deployments: DeploymentService;
}

/** The composition root of the HTTP surface; `listen` lives in server.ts so tests can build it on their own services. */
export function buildApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', false);
  app.use(express.json({ limit: '1mb' }));

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const problems = await checkReadiness({
      db: deps.db,
      temporal: deps.temporal,
      namespace: deps.config.TEMPORAL_NAMESPACE,
      taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    });
    if (Object.keys(problems).length === 0) res.json({ status: 'ready' });
    else res.status(503).json({ status: 'not ready', problems });
  });

  const compat = express.Router();
  compat.use(compatRouter(deps));
  compat.use(compatErrors(deps.log));
  app.use('/compat', compat);

  return app;
}
