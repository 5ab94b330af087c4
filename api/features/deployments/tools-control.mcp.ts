import { z } from 'zod';

import type { Principal } from '@shared/identity/service';
import type { Permission } from '@shared/permissions';

import { defineTool, type ToolCall, type ToolDef, WRITE } from '../../mcp/tool';
import type { CommandAccepted } from './commands';
import type { DeploymentsContext } from './compose';
import { EnvPatchRequest, RedeployRequest, RollbackRequest, ScaleRequest } from './schemas.commands';
import { VolumeMountRequest } from './schemas.volumes';
import { deploymentIdInput, deploymentProjectOf, WAIT_S } from './tools-common.mcp';
import { commandWaiter, Outcome } from './tools-wait.mcp';

/**
 * The deployment controls (stop, start, redeploy, set_env, scale, rollback): each is accepted by the deployment's workflow
 * at once, then carried out; the tool waits for the end up to waitS seconds on Temporal's own long-poll of the
 * update's result (no polling loop), and answers with how it ended or with the call that waits on.
 */
export function deploymentControlTools(deps: DeploymentsContext): ToolDef[] {
  const { deployments } = deps;
  const project = deploymentProjectOf(deps);
  const { settle, outcome } = commandWaiter(deps);

  const control = <S extends z.ZodRawShape>(t: {
    name: string;
    title: string;
    description: string;
    permission: Permission;
    shape: S;
    /** The REST body `shape` comes from, when it has cross-field rules: they hold for the tool's input too. */
    body?: z.ZodType;
    idempotent: boolean;
    destructive?: boolean;
    send: (p: Principal, input: z.output<z.ZodObject<S>> & { deploymentId: string }) => Promise<CommandAccepted>;
  }) =>
    defineTool({
      name: t.name,
      title: t.title,
      description: `${t.description} Waits up to waitS seconds (default 50) for the end, then answers with the outcome or what to call next.`,
      permission: t.permission,
      project: (p, i) => project(p, i as { deploymentId: string }),
      input: z
        .object({ ...deploymentIdInput, ...t.shape, waitS: WAIT_S })
        .strict()
        .superRefine((input, ctx) => {
          const { deploymentId: _id, waitS: _waitS, ...body } = input as Record<string, unknown>;
          const checked = t.body?.safeParse(body);
          if (!checked || checked.success) return;
          for (const issue of checked.error.issues)
            if (issue.code === 'custom') ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message });
        }),
      output: Outcome,
      annotations: { ...WRITE, idempotentHint: t.idempotent, destructiveHint: t.destructive ?? false },
      audit: { resource: 'deployment', id: (input) => (input as { deploymentId: string }).deploymentId },
      run: async ({ principal, input, signal }: ToolCall<Record<string, unknown>>) => {
        const typed = input as z.output<z.ZodObject<S>> & { deploymentId: string; waitS: number };
        const accepted = await t.send(principal, typed);
        await settle(typed.deploymentId, accepted.command.id, typed.waitS, signal);
        return outcome(principal, typed.deploymentId, accepted.command.id, t.name);
      },
    });

  return [
    control({
      name: 'stop',
      title: 'Stop a deployment',
      description: 'Stops every instance and keeps them (and their logs); start brings it back on the same release.',
      permission: 'deployment.manage',
      shape: {},
      idempotent: true,
      destructive: true,
      send: (p, i) => deployments.stop(p, i.deploymentId),
    }),
    control({
      name: 'start',
      title: 'Start a stopped deployment',
      description: 'Starts a stopped deployment again on its current release.',
      permission: 'deployment.manage',
      shape: {},
      idempotent: true,
      send: (p, i) => deployments.start(p, i.deploymentId),
    }),
    control({
      name: 'redeploy',
      title: 'Redeploy with a new environment or new code (same URL)',
      description:
        'Ships a new release of the same deployment (same ID and URL; no new deployment is created): envVars ' +
        'replaces the environment, and/or one new source (image; uploadId of a zip uploaded to POST ' +
        "/compat/uploads/zip; or git, where {} rebuilds the deployment's own repository and branch, or its " +
        "project's, and commit names one commit) is built or pulled while the serving release goes on serving. The " +
        'new release starts ' +
        'beside the serving one and traffic switches only once it is ready; if the build or the release fails, the ' +
        'old release keeps serving and lastFailure says why.',
      permission: 'deployment.create',
      shape: RedeployRequest.shape,
      body: RedeployRequest,
      idempotent: false,
      send: (p, { deploymentId, ...change }) => deployments.redeploy(p, deploymentId, change),
    }),
    control({
      name: 'set_env',
      title: 'Set or remove some environment variables (the others are kept)',
      description:
        'Changes only the variables named: set adds or changes these (name to value), unset removes these; every ' +
        'other variable keeps its value, and the code stays as it is. The merged environment ships as a redeploy ' +
        'does (a new release beside the serving one, traffic switched once it is ready). Values are never returned.',
      permission: 'deployment.create',
      shape: EnvPatchRequest.shape,
      body: EnvPatchRequest,
      idempotent: false,
      send: (p, { deploymentId, set, unset }) =>
        deployments.patchEnv(p, deploymentId, { ...(set ? { set } : {}), ...(unset ? { unset } : {}) }),
    }),
    control({
      name: 'scale',
      title: 'Scale a deployment',
      description: 'Runs `replicas` instances of the current release behind its URL; 0 is the same as stop.',
      permission: 'deployment.manage',
      shape: ScaleRequest.shape,
      idempotent: true,
      send: (p, i) => deployments.scale(p, i.deploymentId, i.replicas),
    }),
    control({
      name: 'rollback',
      title: 'Roll back to an earlier release',
      description:
        'Serves an earlier release again (its recorded image, no rebuild): `revision`, or by default the last ' +
        'release that was healthy before the current one. get_deployment lists the releases.',
      permission: 'deployment.manage',
      shape: RollbackRequest.shape,
      idempotent: false,
      send: (p, i) => deployments.rollback(p, i.deploymentId, i.revision),
    }),
    control({
      name: 'attach_volume',
      title: 'Attach a volume to a deployment',
      description:
        'Mounts a ready volume of the organisation at mountPath: a new release of the serving image and env starts ' +
        'with it. A volume has one writer: attached to one deployment, which must run one instance. A rollback keeps ' +
        'the volume; detach_volume removes it (its data stays).',
      permission: 'deployment.manage',
      shape: VolumeMountRequest.shape,
      idempotent: false,
      send: (p, i) => deployments.attachVolume(p, i.deploymentId, { volumeId: i.volumeId, mountPath: i.mountPath }),
    }),
    control({
      name: 'detach_volume',
      title: 'Detach a volume from a deployment',
      description:
        'Unmounts the volume: a new release of the serving image and env starts without it. The volume and its data ' +
        'stay; attach it again, here or elsewhere, or delete it.',
      permission: 'deployment.manage',
      shape: { volumeId: VolumeMountRequest.shape.volumeId },
      idempotent: false,
      send: (p, i) => deployments.detachVolume(p, i.deploymentId, i.volumeId),
    }),
    defineTool({
      name: 'wait_for_command',
      title: 'Wait for a deployment command',
      description:
        'Waits (at most timeoutS seconds, one call) for a stop, start, redeploy, set_env, scale, rollback, ' +
        'attach_volume or detach_volume to end, and ' +
        'answers with its outcome. Resumable: call again while it is still running.',
      permission: 'deployment.read',
      project,
      input: z.object({ ...deploymentIdInput, commandId: z.string().min(1).max(300), timeoutS: WAIT_S }),
      output: Outcome,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      run: async ({ principal, input, signal }) => {
        await deployments.command(principal, input.deploymentId, input.commandId);
        await settle(input.deploymentId, input.commandId, input.timeoutS, signal);
        return outcome(principal, input.deploymentId, input.commandId, input.commandId.split(':')[0] ?? 'command');
      },
    }),
  ];
}
