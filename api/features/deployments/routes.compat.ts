import type { z } from 'zod';

import type { Principal } from '@shared/identity/service';

import { principalOf } from '../../http/auth';
import { withIdempotencyKey } from '../../http/fields';
import { route, type RouteDef } from '../../http/routes';
import { deploymentProject, newDeploymentProject, requestStatus } from './access';
import type { DeploymentsContext } from './compose';
import { providerAvailability } from './providers';
import { answerReplays } from './replays';
import { DeploymentIdParams, DeployRequest, GetQuery, ListQuery, LogsQuery, SourceDeployRequest } from './schemas';
import { DeployAccepted, Deployment, DeploymentList, Logs, Providers } from './schemas.responses';
import type { DeploymentService } from './service';
import { deploymentView } from './views';
import { readOrWait } from './wait';

/** The compatibility API's deployment routes (docs/architecture.md, "The interface we keep"). */
export function compatDeploymentRoutes(ctx: DeploymentsContext): RouteDef[] {
  const { deployments, can } = ctx;
  const { compatReads: reads, compatWrites: writes, deployCreate: creations } = ctx.limit;
  const accepted = (d: Awaited<ReturnType<DeploymentService['deployImage']>>, base: string) => ({
    deploymentId: d._id,
    status: 'queued' as const,
    provider: d.provider,
    statusUrl: `${base}/deployments/${d._id}`,
    createdAt: d.createdAt.toISOString(),
  });
  const tags = ['Compatibility API'];
  /** The two ways in answer alike: accepted and queued, under the same limits, permission and refusals. */
  const deployRoute = <B extends z.ZodType>(
    path: string,
    summary: string,
    body: B,
    start: (principal: Principal, input: z.infer<B>) => ReturnType<DeploymentService['deployImage']>,
  ) =>
    route({
      method: 'post',
      path,
      summary,
      description: 'Accepted at once (202); poll statusUrl (or GET it with ?wait=running) until running or failed.',
      tags,
      request: { body },
      // A replayed requestId is answered first, spending a read: it creates nothing (./replays.ts).
      before: [answerReplays(ctx, reads), writes, creations, can('deployment.create', inProject)],
      audit: { resource: 'deployment' },
      responses: {
        202: { description: 'Accepted and queued', schema: DeployAccepted },
        404: { description: 'PROJECT_NOT_FOUND: projectId is not a project of this organisation' },
        409: {
          description:
            'DUPLICATE_REQUEST: the requestId was used before; details.deploymentId names the deployment it made. ' +
            'Spends a read, not a write or a creation.',
        },
      },
      handler: async ({ body: input }, req, res) => {
        const d = await start(principalOf(req), input as z.infer<B>);
        res.status(202).json(accepted(d, req.baseUrl));
      },
    });
  const inProject = newDeploymentProject;
  const itsProject = deploymentProject(deployments);

  return [
    route({
      method: 'get',
      path: '/providers',
      summary: 'List providers and whether the organisation’s plan and this server allow them',
      tags,
      request: {},
      before: [reads, can('deployment.read')],
      responses: { 200: { description: 'Providers', schema: Providers } },
      handler: async (_input, req, res) => {
        const { org } = principalOf(req);
        const cloud = await ctx.cloudCredentials.regions(org._id);
        res.json({ providers: providerAvailability(org.plan, ctx.config.ENGINE_REGION, cloud) });
      },
    }),
    deployRoute('/deploy', 'Deploy a container image', DeployRequest, (p, body) =>
      deployments.deployImage(p, withIdempotencyKey(body), 'compat'),
    ),
    deployRoute(
      '/deploy/source',
      'Deploy from source: an uploaded zip (uploadId) or a Git repository (repoUrl)',
      SourceDeployRequest,
      (p, body) => deployments.deploySource(p, withIdempotencyKey(body), 'compat'),
    ),
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
        res.json({ deployments: items.map((d) => deploymentView(d)), total, limit: query.limit, offset: query.offset });
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id',
      summary: 'Get a deployment’s status and details; with `wait`, when it reaches a status',
      description:
        'With `?wait=running&timeout=60` the answer comes when the deployment is running or settled (failed, stopped), or after the timeout with the status as it is then: one request, counted as one read, instead of a polling loop.',
      tags,
      request: { params: DeploymentIdParams, query: GetQuery },
      before: [reads, can('deployment.read', itsProject)],
      responses: { 200: { description: 'The deployment', schema: Deployment } },
      handler: async ({ params, query }, req, res) => {
        const { record, releases } = await readOrWait(
          {
            waitFor: ctx.waitForDeployment,
            status: (_principal, id) => requestStatus(deployments, req, id),
            releasesSummary: ctx.observe.releasesSummary,
          },
          principalOf(req),
          params.id,
          query,
          res,
        );
        // The same status, URL and releases as the platform API's read.
        res.json(deploymentView(record, releases));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/logs',
      summary: 'The last log lines: build and system lines, then the container’s output',
      tags,
      request: { params: DeploymentIdParams, query: LogsQuery },
      before: [reads, can('deployment.logs', itsProject)],
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
      before: [writes, can('deployment.manage', itsProject)],
      responses: { 204: { description: 'Destroyed; every later read of the ID is 404' } },
      handler: async ({ params }, req, res) => {
        await deployments.destroy(principalOf(req), params.id);
        res.status(204).end();
      },
    }),
  ];
}
