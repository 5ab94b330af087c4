import { z } from 'zod';

import { type DeploymentRecord, DeploymentStatus } from '@shared/deployments/types';
import type { DeploymentHealth } from '@shared/engine/observe';
import type { Principal } from '@shared/identity/service';

import { withIdempotencyKey } from '../../http/fields';
import { consumeLimit } from '../../mcp/limit';
import { fence } from '../../mcp/text';
import { defineTool, Next, READ, type ToolDef, WRITE } from '../../mcp/tool';
import type { DeploymentsContext } from './compose';
import { PlatformDeployRequest, PlatformListQuery } from './schemas.platform';
import { Deployment } from './schemas.responses';
import { deploymentIdInput, deploymentProjectOf, nextFor, Summary, summary, WAIT_S } from './tools-common.mcp';
import { deploymentDestroyTool } from './tools-destroy.mcp';
import { deploymentLogsTool } from './tools-logs.mcp';
import { deploymentView } from './views';
import { SETTLED } from './wait';

/** Health as an agent needs it: the overall verdict and each instance's state (the probe's detail stays on REST). */
const Health = z.object({
  overall: z.enum(['healthy', 'degraded', 'unhealthy', 'stopped']),
  instances: z.array(
    z.object({
      name: z.string(),
      revision: z.number().int(),
      state: z.string(),
      restarts: z.number().int(),
      exitCode: z.number().int().optional(),
      oomKilled: z.boolean(),
    }),
  ),
});
const healthView = (h: DeploymentHealth): z.infer<typeof Health> => ({
  overall: h.overall,
  instances: h.instances.map((i) => ({
    name: i.name,
    revision: i.revision,
    state: i.state,
    restarts: i.restarts,
    ...(i.exitCode !== undefined ? { exitCode: i.exitCode } : {}),
    oomKilled: i.oomKilled,
  })),
});

const Waited = z.object({ deployment: Summary, settled: z.boolean(), next: Next.optional() });
const waited = (d: DeploymentRecord) => {
  const next = nextFor(d);
  return { deployment: summary(d), settled: SETTLED.includes(d.status), ...(next ? { next } : {}) };
};

/**
 * The deploy's input: the platform deploy's (image, Git or upload, replicas, projectId) plus how long to wait. Its
 * cross-field rules (exactly one source, image-only fields) are PlatformDeployRequest's own, run again here.
 */
const DeployInput = z
  .object({ ...PlatformDeployRequest.shape, waitS: WAIT_S })
  .strict()
  .superRefine(({ waitS: _waitS, ...body }, ctx) => {
    const checked = PlatformDeployRequest.safeParse(body);
    if (checked.success) return;
    for (const issue of checked.error.issues)
      if (issue.code === 'custom') ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
  });

export function deploymentTools(deps: DeploymentsContext): ToolDef[] {
  const { deployments } = deps;
  const project = deploymentProjectOf(deps);
  const get = (p: Principal, id: string) => deployments.get(p, id);

  return [
    defineTool({
      name: 'list_deployments',
      title: 'List deployments',
      description:
        'Deployments you can see, newest first, with status and URL. Filter by status, provider or projectId.',
      permission: 'deployment.read',
      input: PlatformListQuery,
      output: z.object({ deployments: z.array(Summary), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await deployments.list(principal, input);
        return { deployments: items.map(summary), total };
      },
    }),
    defineTool({
      name: 'get_deployment',
      title: 'Get a deployment',
      description:
        'Status, URL, source, env names (never values), events, releases, replicas and instances, health when it ' +
        'runs, and when something failed the last failure with a hint. Follow `next` when present.',
      permission: 'deployment.read',
      project,
      input: z.object(deploymentIdInput),
      output: z.object({ deployment: Deployment, health: Health.optional(), next: Next.optional() }),
      annotations: { ...READ, openWorldHint: true },
      run: async ({ principal, input }) => {
        const d = await get(principal, input.deploymentId);
        const next = nextFor(d);
        const health = d.status === 'running' ? healthView(await deps.observe.health(d)) : undefined;
        return {
          deployment: deploymentView(d, await deps.observe.releasesSummary(d)),
          ...(health ? { health } : {}),
          ...(next ? { next } : {}),
        };
      },
    }),
    defineTool({
      name: 'deploy',
      title: 'Deploy',
      description:
        'Deploy a container image (image), a Git repository (repoUrl, branch) or a zip uploaded with POST ' +
        '/compat/uploads/zip (uploadId); replicas, projectId. A requestId makes a retry safe. Waits up to waitS (default ' +
        '50 s) for running or failed, then answers with the status and what to call next.',
      permission: 'deployment.create',
      project: async (_p, input) => input.projectId,
      input: DeployInput,
      output: Waited.extend({ deploymentId: z.uuid() }),
      annotations: { ...WRITE, idempotentHint: false },
      audit: { resource: 'deployment', id: (_i, out) => out?.deploymentId },
      run: async ({ principal, input }) => {
        // A replay creates nothing: answered before the creation budget (10 per 15 minutes per user) is spent.
        const { waitS, image: img, ...rest } = withIdempotencyKey(input);
        await deployments.refuseReplay(principal, rest.idempotencyKey);
        await consumeLimit(deps.limiters.deployCreate, `user:${principal.user._id}`);
        const record = img
          ? await deployments.deployImage(principal, { ...rest, image: img }, 'platform')
          : await deployments.deploySource(principal, rest, 'platform');
        const d = waitS
          ? await deps.waitForDeployment(principal, record._id, { until: 'running', timeoutS: waitS })
          : record;
        return { deploymentId: d._id, ...waited(d) };
      },
    }),
    defineTool({
      name: 'wait_for_deployment',
      title: 'Wait for a deployment',
      description:
        'Waits until the deployment reaches `until` (default running) or any settled status (running, stopped, ' +
        'failed), at most timeoutS seconds, in one call. Call it again to keep waiting: it is resumable.',
      permission: 'deployment.read',
      project,
      input: z.object({ ...deploymentIdInput, until: DeploymentStatus.default('running'), timeoutS: WAIT_S }),
      output: Waited,
      annotations: READ,
      run: async ({ principal, input }) =>
        waited(
          await deps.waitForDeployment(principal, input.deploymentId, { until: input.until, timeoutS: input.timeoutS }),
        ),
    }),
    deploymentLogsTool(deps, project),
    defineTool({
      name: 'diagnose_deployment',
      title: 'Diagnose a deployment',
      description:
        'Why a deployment failed, or why its last command did not take: the phase, exit code, the last lines (fenced, ' +
        'untrusted) and a hint that says what to change, then the tool to call to fix it.',
      permission: 'deployment.logs',
      project,
      input: z.object(deploymentIdInput),
      output: z.object({
        deploymentId: z.uuid(),
        status: DeploymentStatus,
        healthy: z.boolean(),
        phase: z.string().optional(),
        message: z.string().optional(),
        exitCode: z.number().int().optional(),
        hint: z.string().optional(),
        lastLines: z.string().optional(),
        next: Next.optional(),
      }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const d = await get(principal, input.deploymentId);
        // A failed deployment's error carries the hint table's answer (views.ts); a running one that refused a
        // command keeps serving, and lastFailure says why the command did not take.
        const failure = deploymentView(d).error ?? d.lastFailure;
        const failed = d.status === 'failed';
        const deploymentId = d._id;
        const next: Next | undefined = failed
          ? {
              tool: 'deploy',
              why: 'Change what the hint names (the port, the env, the image), then deploy again; or rollback to a release that was healthy.',
            }
          : failure
            ? { tool: 'get_deployment', arguments: { deploymentId }, why: 'The serving release still runs; see it.' }
            : nextFor(d);
        return {
          deploymentId,
          status: d.status,
          healthy: d.status === 'running' && !failure,
          ...(failure ? { phase: failure.phase, message: failure.message } : {}),
          ...(failure?.exitCode !== undefined ? { exitCode: failure.exitCode } : {}),
          ...(failure?.hint ? { hint: failure.hint } : {}),
          ...(failure?.lastLines?.length ? { lastLines: fence(failure.lastLines, 'log') } : {}),
          ...(next ? { next } : {}),
        };
      },
    }),
    deploymentDestroyTool(deps, project),
  ];
}
