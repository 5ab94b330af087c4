import type { DeploymentRecord } from '@shared/deployments/types';

import { principalOf } from '../../http/auth';
import { withIdempotencyKey } from '../../http/fields';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { deploymentProject, newDeploymentProject, requestStatus } from './access';
import type { DeploymentsContext } from './compose';
import { answerReplays } from './replays';
import { commandRoutes } from './routes.commands';
import { volumeAttachmentRoutes } from './routes.volumes';
import { DeploymentIdParams, GetQuery } from './schemas';
import {
  ContainerMetrics,
  Health,
  HistoryQuery,
  MetricsHistory,
  PlatformLogs,
  PlatformLogsQuery,
  sinceDate,
} from './schemas.observe';
import {
  Accepted,
  DestroyQuery,
  PlatformDeployment,
  PlatformDeploymentList,
  PlatformDeployRequest,
  PlatformListQuery,
  ReleasesQuery,
} from './schemas.platform';
import { ReleaseList } from './schemas.responses';
import { platformDeploymentView, releaseView } from './views';
import { readOrWait } from './wait';

/**
 * The platform API's deployments (docs/architecture.md, "A deployment's lifecycle, as workflows"): every deployment of
 * the organisation, whichever API created it, with its releases, health and resource use. Creation and destroy are the
 * compat API's own service calls, so both origins deploy and destroy the same way; commands are in routes.commands.ts.
 */
export function platformDeploymentRoutes(ctx: DeploymentsContext): RouteDef[] {
  const { deployments, observe, can } = ctx;
  const engineRegion = ctx.config.ENGINE_REGION;
  const tags = ['Deployments'];
  const itsProject = deploymentProject(deployments);
  const statusUrl = (base: string, id: string) => `${base}/deployments/${id}`;
  const accepted = (d: DeploymentRecord, base: string) =>
    ok({ deployment: platformDeploymentView(d, engineRegion), statusUrl: statusUrl(base, d._id) });

  return [
    route({
      method: 'get',
      path: '/deployments',
      summary: "List the organisation's deployments (created through either API), newest first",
      tags,
      request: { query: PlatformListQuery },
      before: [
        can('deployment.read', {
          project: (req) => (typeof req.query.projectId === 'string' ? req.query.projectId : undefined),
        }),
      ],
      responses: { 200: { description: 'A page of deployments', schema: success(PlatformDeploymentList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await deployments.list(principalOf(req), query);
        res.json(
          ok({
            deployments: items.map((d) => platformDeploymentView(d, engineRegion)),
            total,
            limit: query.limit,
            offset: query.offset,
          }),
        );
      },
    }),
    route({
      method: 'post',
      path: '/deployments',
      summary: 'Deploy an image, an uploaded zip or a Git repository',
      description:
        'Accepted at once (202): poll statusUrl until status is running or failed. 10 creations per 15 minutes per ' +
        'user; a repeated requestId is answered 409 without spending one.',
      tags,
      request: { body: PlatformDeployRequest },
      before: [answerReplays(ctx), ctx.limit.deployCreate, can('deployment.create', newDeploymentProject)],
      responses: {
        202: { description: 'Accepted and queued', schema: success(Accepted) },
        404: { description: 'projectId is not a project of this organisation' },
        409: {
          description:
            'The requestId was used before: the message names the deployment it made; nothing was started and no ' +
            'creation was counted',
        },
      },
      handler: async ({ body }, req, res) => {
        const principal = principalOf(req);
        const { image, ...rest } = withIdempotencyKey(body);
        const d =
          image !== undefined
            ? await deployments.deployImage(principal, { ...rest, image }, 'platform')
            : await deployments.deploySource(principal, rest, 'platform');
        res.status(202).json(accepted(d, req.baseUrl));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id',
      summary:
        "A deployment's status, stable URL, instances, newest releases and last failure; with `wait`, when it reaches a status",
      description:
        'With `?wait=running&timeout=60` the answer comes when the deployment is running or settled (failed, stopped), or after the timeout with the status as it is then: one request, counted as one, instead of a polling loop (the same wait as the compatibility API).',
      tags,
      request: { params: DeploymentIdParams, query: GetQuery },
      before: [can('deployment.read', itsProject)],
      responses: { 200: { description: 'The deployment', schema: success(PlatformDeployment) } },
      handler: async ({ params, query }, req, res) => {
        const { record, releases } = await readOrWait(
          {
            waitFor: ctx.waitForDeployment,
            status: (_principal, id) => requestStatus(deployments, req, id),
            releasesSummary: observe.releasesSummary,
          },
          principalOf(req),
          params.id,
          query,
          res,
        );
        res.json(
          ok(
            platformDeploymentView(
              record,
              engineRegion,
              releases,
              await deployments.volumesOf(principalOf(req), params.id),
            ),
          ),
        );
      },
    }),
    route({
      method: 'delete',
      path: '/deployments/:id',
      summary: 'Destroy a deployment: permanent, releases everything it held (the same destroy as the compat API)',
      tags,
      request: { params: DeploymentIdParams, query: DestroyQuery },
      before: [can('deployment.manage', itsProject)],
      responses: { 204: { description: 'Destroyed; every later read of the ID is 404' } },
      handler: async ({ params, query }, req, res) => {
        await deployments.destroy(principalOf(req), params.id, { keepDatabases: query.keepDatabases });
        res.status(204).end();
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/logs',
      summary: "The last log lines: the build's, Slipway's notices and the instances' output, merged by time",
      tags,
      request: { params: DeploymentIdParams, query: PlatformLogsQuery },
      before: [can('deployment.logs', itsProject)],
      responses: { 200: { description: 'Log lines, oldest first', schema: success(PlatformLogs) } },
      handler: async ({ params, query }, req, res) => {
        const d = await deployments.get(principalOf(req), params.id);
        const since = query.since === undefined ? undefined : sinceDate(query.since);
        const lines = await observe.logs(d, {
          limit: query.limit,
          ...(since ? { since } : {}),
          ...(query.stream ? { stream: query.stream } : {}),
          ...(query.instance ? { instance: query.instance } : {}),
        });
        res.json(ok({ deploymentId: d._id, lines }));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/releases',
      summary: 'Every release of the deployment, newest first: what a rollback can go back to',
      tags,
      request: { params: DeploymentIdParams, query: ReleasesQuery },
      before: [can('deployment.read', itsProject)],
      responses: { 200: { description: 'A page of releases', schema: success(ReleaseList) } },
      handler: async ({ params, query }, req, res) => {
        const d = await deployments.get(principalOf(req), params.id);
        const { items, total } = await observe.releases(d, query);
        res.json(ok({ releases: items.map(releaseView), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/health',
      summary: 'Per instance: container state, restarts and an HTTP probe of its port now; and the overall verdict',
      tags,
      request: { params: DeploymentIdParams },
      before: [can('deployment.read', itsProject)],
      responses: { 200: { description: 'Health', schema: success(Health) } },
      handler: async ({ params }, req, res) => {
        const d = await deployments.get(principalOf(req), params.id);
        res.json(ok({ deploymentId: d._id, status: d.status, ...(await observe.health(d)) }));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/container-metrics',
      summary: 'Resource use now, per running instance, as docker stats shows it',
      description: 'One engine stats read per instance (about a second each, read in parallel).',
      tags,
      request: { params: DeploymentIdParams },
      before: [can('deployment.read', itsProject)],
      responses: { 200: { description: 'Metrics', schema: success(ContainerMetrics) } },
      handler: async ({ params }, req, res) => {
        const d = await deployments.get(principalOf(req), params.id);
        res.json(ok({ deploymentId: d._id, instances: await observe.metrics(d) }));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/container-metrics/history',
      summary: 'Recorded resource use over a window, averaged per step, per instance',
      description:
        'Samples are recorded every METRICS_SAMPLE_S (15 s) while instances run and kept METRICS_RETENTION_H (24 h).',
      tags,
      request: { params: DeploymentIdParams, query: HistoryQuery },
      before: [can('deployment.read', itsProject)],
      responses: { 200: { description: 'Metrics history', schema: success(MetricsHistory) } },
      handler: async ({ params, query }, req, res) => {
        const d = await deployments.get(principalOf(req), params.id);
        res.json(ok({ deploymentId: d._id, ...(await observe.history(d, query)) }));
      },
    }),
    ...commandRoutes(ctx),
    ...volumeAttachmentRoutes(ctx),
  ];
}
