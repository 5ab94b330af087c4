import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { type RequestHandler, Router } from 'express';

import type { Config } from '../../shared/config';
import { AppError } from '../../shared/errors';
import type { IdentityService } from '../../shared/identity/service';
import type { Permission } from '../../shared/permissions';
import { providerAvailability } from '../deployments/providers';
import type { DeploymentService } from '../deployments/service';
import { authenticate, principalOf, requirePermission } from '../middleware/auth';
import { consume, deployCreateLimit, rateLimit, type RateLimiters } from '../middleware/rate-limit';
import { mountRoutes, route, type RouteDef } from '../routes';
import { multipartArchive } from '../uploads/multipart';
import type { UploadService } from '../uploads/service';
import {
  DeployAccepted,
  Deployment,
  DeploymentIdParams,
  DeploymentList,
  DeployRequest,
  ListQuery,
  Logs,
  LogsQuery,
  Providers,
  SourceDeployRequest,
  UploadResult,
} from './schemas';
import { deploymentView } from './views';

export interface CompatDeps {
  config: Pick<Config, 'UPLOAD_MAX_BYTES' | 'UPLOAD_TMP_DIR'>;
  identity: IdentityService;
  deployments: DeploymentService;
  uploads: UploadService;
  limiters: RateLimiters;
}

const orgKey = (req: Parameters<RequestHandler>[0]) => principalOf(req).org._id;

/** The eight routes of the compatibility API; mounted under /compat by app.ts, documented by openapi.ts. */
export function compatRoutes(deps: CompatDeps): RouteDef[] {
  const { identity, deployments, limiters } = deps;
  const can = (permission: Permission) => requirePermission(identity, permission);
  const reads = rateLimit(limiters.compatReads, orgKey);
  const writes = rateLimit(limiters.compatWrites, orgKey);
  const uploadsLimit = rateLimit(limiters.compatUploads, orgKey);
  const creations = deployCreateLimit(limiters);
  const multipart = multipartArchive({
    maxBytes: deps.config.UPLOAD_MAX_BYTES,
    tmpDir: deps.config.UPLOAD_TMP_DIR ?? path.join(os.tmpdir(), 'slipway-uploads'),
  });

  const accepted = (d: Awaited<ReturnType<DeploymentService['deployImage']>>, base: string) => ({
    deploymentId: d._id,
    status: 'queued' as const,
    provider: d.provider,
    statusUrl: `${base}/deployments/${d._id}`,
    createdAt: d.createdAt.toISOString(),
  });
  const tags = ['Compatibility API'];

  return [
    route({
      method: 'get',
      path: '/providers',
      summary: 'List providers and whether the organisation’s plan and this server allow them',
      tags,
      request: {},
      before: [reads, can('deployment.read')],
      responses: { 200: { description: 'Providers', schema: Providers } },
      handler: (_input, req, res) => {
        res.json({ providers: providerAvailability(principalOf(req).org.plan) });
      },
    }),
    route({
      method: 'post',
      path: '/deploy',
      summary: 'Deploy a container image',
      description: 'Accepted at once (202); poll statusUrl until status is running or failed.',
      tags,
      request: { body: DeployRequest },
      before: [writes, creations, can('deployment.create')],
      responses: {
        202: { description: 'Accepted and queued', schema: DeployAccepted },
        404: { description: 'PROJECT_NOT_FOUND: projectId is not a project of this organisation' },
        409: { description: 'DUPLICATE_REQUEST: the requestId was used before; details.deploymentId names it' },
      },
      handler: async ({ body }, req, res) => {
        const d = await deployments.deployImage(principalOf(req), body, 'compat');
        res.status(202).json(accepted(d, req.baseUrl));
      },
    }),
    route({
      method: 'post',
      path: '/deploy/source',
      summary: 'Deploy from source: an uploaded zip (uploadId) or a Git repository (repoUrl)',
      tags,
      request: { body: SourceDeployRequest },
      before: [writes, creations, can('deployment.create')],
      responses: {
        202: { description: 'Accepted and queued', schema: DeployAccepted },
        404: { description: 'PROJECT_NOT_FOUND: projectId is not a project of this organisation' },
        409: { description: 'DUPLICATE_REQUEST: the requestId was used before; details.deploymentId names it' },
      },
      handler: async ({ body }, req, res) => {
        const d = await deployments.deploySource(principalOf(req), body, 'compat');
        res.status(202).json(accepted(d, req.baseUrl));
      },
    }),
    route({
      method: 'post',
      path: '/uploads/zip',
      summary: 'Upload a zip archive for POST /deploy/source',
      tags,
      request: {},
      multipart: { field: 'archive', description: 'The zip archive' },
      before: [uploadsLimit, can('deployment.create'), multipart],
      responses: { 201: { description: 'Stored', schema: UploadResult } },
      handler: async (_input, req, res) => {
        if (!req.file) throw new AppError('INVALID_REQUEST', 'Missing the multipart file part "archive".');
        try {
          const u = await deps.uploads.accept(principalOf(req), req.file);
          res.status(201).json({
            uploadId: u._id,
            filename: u.filename,
            size: u.size,
            sha256: u.sha256,
            expiresAt: u.expiresAt.toISOString(),
          });
        } finally {
          await fs.rm(req.file.path, { force: true });
        }
      },
    }),
    route({
      method: 'get',
      path: '/deployments',
      summary: 'List deployments created through this API, newest first',
      tags,
      request: { query: ListQuery },
      before: [reads, can('deployment.read')],
      responses: { 200: { description: 'A page of deployments', schema: DeploymentList } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await deployments.list(principalOf(req), { ...query, origin: 'compat' });
        res.json({ deployments: items.map(deploymentView), total, limit: query.limit, offset: query.offset });
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id',
      summary: 'Get a deployment’s status and details',
      tags,
      request: { params: DeploymentIdParams },
      before: [reads, can('deployment.read')],
      responses: { 200: { description: 'The deployment', schema: Deployment } },
      handler: async ({ params }, req, res) => {
        res.json(deploymentView(await deployments.get(principalOf(req), params.id)));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/logs',
      summary: 'The last log lines: build and system lines, then the container’s output',
      tags,
      request: { params: DeploymentIdParams, query: LogsQuery },
      before: [reads, can('deployment.logs')],
      responses: { 200: { description: 'Log lines, oldest first', schema: Logs } },
      handler: async ({ params, query }, req, res) => {
        res.json({ deploymentId: params.id, lines: await deployments.logs(principalOf(req), params.id, query.limit) });
      },
    }),
    route({
      method: 'delete',
      path: '/deployments/:id',
      summary: 'Destroy a deployment: permanent, releases everything it held',
      tags,
      request: { params: DeploymentIdParams },
      before: [writes, can('deployment.manage')],
      responses: { 204: { description: 'Destroyed; every later read of the ID is 404' } },
      handler: async ({ params }, req, res) => {
        await deployments.destroy(principalOf(req), params.id);
        res.status(204).end();
      },
    }),
  ];
}

/** Every compat request is authenticated first; a refused token still counts against a per-address budget, so 401s carry X-RateLimit-* too. */
export function compatRouter(deps: CompatDeps): Router {
  const router = Router();
  router.use(authenticate(deps.identity, (req, res) => consume(deps.limiters.compatAnonymous, `ip:${req.ip}`, res)));
  router.use(mountRoutes(compatRoutes(deps)));
  // An unknown route still spends a read, so its 404 carries the X-RateLimit-* headers like every compat response.
  router.use(rateLimit(deps.limiters.compatReads, orgKey), (req, _res, next) =>
    next(new AppError('INVALID_REQUEST', `No route ${req.method} ${req.originalUrl}; see /openapi.json.`, {}, 404)),
  );
  return router;
}
