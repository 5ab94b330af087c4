import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { deploymentProject } from './access';
import type { CommandAccepted as Accepted } from './commands';
import type { DeploymentsContext } from './compose';
import { DeploymentIdParams } from './schemas';
import {
  CommandAccepted,
  CommandIdParams,
  CommandProgress,
  EnvPatchAccepted,
  EnvPatchRequest,
  RedeployRequest,
  RollbackRequest,
  ScaleRequest,
} from './schemas.commands';
import { platformDeploymentView } from './views';

const REFUSED =
  'The command is not possible now: the message names the current status and the commands it accepts (or why the arguments are refused)';

/**
 * The deployment's controls (docs/architecture.md, "A deployment's lifecycle, as workflows"): each is accepted by the
 * deployment's workflow (202, with the URL to follow it) or refused at once by its validator (400 naming the status and
 * what it accepts); the workflow carries accepted commands out one at a time. The decisions are the commands service's;
 * these routes render them.
 */
export function commandRoutes(ctx: DeploymentsContext): RouteDef[] {
  const { deployments, can } = ctx;
  const tags = ['Deployments'];
  const itsProject = deploymentProject(deployments);
  const accepted = (a: Accepted, base: string) => {
    const statusUrl = `${base}/deployments/${a.deployment._id}`;
    return ok({
      deployment: platformDeploymentView(a.deployment, ctx.config.ENGINE_REGION),
      statusUrl,
      command: { ...a.command, url: `${statusUrl}/commands/${encodeURIComponent(a.command.id)}` },
    });
  };
  const responses = {
    202: { description: 'Accepted: it runs after the commands accepted before it', schema: success(CommandAccepted) },
    400: { description: REFUSED },
  };

  return [
    route({
      method: 'post',
      path: '/deployments/:id/redeploy',
      summary:
        'Redeploy with a new environment, new code, or both: a new release starts beside the serving one and takes over once ready',
      description:
        'New code (`image`, `uploadId` from POST /compat/uploads/zip, or `git`: `{"git": {}}` rebuilds the ' +
        'deployment’s own repository and branch, or its project’s, at their head; `{"git": {"commit": "<sha>"}}` that ' +
        'commit) is built or pulled as a first deploy’s is, ' +
        'while the serving release goes on serving; the deployment keeps its ID and URL, and no deployment creation is ' +
        'counted. If the build or the new release fails, the old one keeps serving, the status stays as it was and ' +
        'lastFailure says why.',
      tags,
      request: { params: DeploymentIdParams, body: RedeployRequest },
      before: [can('deployment.create', itsProject)],
      responses: {
        ...responses,
        404: { description: 'No such deployment in this organisation, or an uploadId this organisation cannot use' },
      },
      handler: async ({ params, body }, req, res) => {
        res.status(202).json(accepted(await deployments.redeploy(principalOf(req), params.id, body), req.baseUrl));
      },
    }),
    route({
      method: 'patch',
      path: '/deployments/:id/env',
      summary: 'Set or remove some environment variables, keeping the others: a redeploy with the merged environment',
      description:
        'The serving environment with `set` added or changed and `unset` removed becomes the new release’s, as a ' +
        'redeploy with the whole `envVars` would (the same permission, refusals and 202 with a command to follow); ' +
        'the code stays as it is. Values are never returned: the answer names the variables only.',
      tags,
      request: { params: DeploymentIdParams, body: EnvPatchRequest },
      before: [can('deployment.create', itsProject)],
      responses: {
        202: { description: responses[202].description, schema: success(EnvPatchAccepted) },
        400: { description: `${REFUSED}; or a name to remove that is not set, or a change past the env limits` },
        404: { description: 'No such deployment in this organisation' },
      },
      handler: async ({ params, body }, req, res) => {
        const a = await deployments.patchEnv(principalOf(req), params.id, body);
        res.status(202).json(ok({ ...accepted(a, req.baseUrl).data, env: a.env }));
      },
    }),
    route({
      method: 'post',
      path: '/deployments/:id/stop',
      summary: 'Stop every instance; the URL answers 503 until start',
      tags,
      request: { params: DeploymentIdParams },
      before: [can('deployment.manage', itsProject)],
      responses,
      handler: async ({ params }, req, res) => {
        res.status(202).json(accepted(await deployments.stop(principalOf(req), params.id), req.baseUrl));
      },
    }),
    route({
      method: 'post',
      path: '/deployments/:id/start',
      summary: 'Start a stopped deployment again: the same release, the same URL',
      tags,
      request: { params: DeploymentIdParams },
      before: [can('deployment.manage', itsProject)],
      responses,
      handler: async ({ params }, req, res) => {
        res.status(202).json(accepted(await deployments.start(principalOf(req), params.id), req.baseUrl));
      },
    }),
    route({
      method: 'post',
      path: '/deployments/:id/scale',
      summary: "Run this many instances of the serving release (0 stops it), up to the plan's maximum",
      tags,
      request: { params: DeploymentIdParams, body: ScaleRequest },
      before: [can('deployment.manage', itsProject)],
      responses,
      handler: async ({ params, body }, req, res) => {
        res
          .status(202)
          .json(accepted(await deployments.scale(principalOf(req), params.id, body.replicas), req.baseUrl));
      },
    }),
    route({
      method: 'post',
      path: '/deployments/:id/rollback',
      summary: 'Go back to an earlier release (its image and environment), or to the last healthy one',
      description: 'No registry and no rebuild: the release’s image is kept on the engine.',
      tags,
      request: { params: DeploymentIdParams, body: RollbackRequest },
      before: [can('deployment.manage', itsProject)],
      responses,
      handler: async ({ params, body }, req, res) => {
        res
          .status(202)
          .json(accepted(await deployments.rollback(principalOf(req), params.id, body.revision), req.baseUrl));
      },
    }),
    route({
      method: 'get',
      path: '/deployments/:id/commands/:commandId',
      summary: 'Follow an accepted command: running, succeeded (with what it left) or failed (with why)',
      tags,
      request: { params: CommandIdParams },
      before: [can('deployment.read', itsProject)],
      responses: { 200: { description: 'The command', schema: success(CommandProgress) } },
      handler: async ({ params }, req, res) => {
        res.json(ok(await deployments.command(principalOf(req), params.id, params.commandId)));
      },
    }),
  ];
}
