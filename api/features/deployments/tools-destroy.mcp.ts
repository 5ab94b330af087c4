import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

import { z } from 'zod';

import { envNamesOf } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import { defineTool, Next, type ToolDef } from '../../mcp/tool';
import type { DeploymentsContext } from './compose';
import { DeploymentIdParams } from './schemas';

/** How long a destroy preview's `confirm` holds: long enough to read the preview, too short to be kept around. */
export const CONFIRM_TTL_S = 120;

/**
 * The `confirm` of a destroy preview: an HMAC over (deployment, token, expiry) under a key derived from SECRETS_KEY.
 * Bound to the token that saw the preview and to that deployment, so it confirms nothing else and no one else; it
 * needs no storage, so any api process (or `slipway mcp`) checks it.
 */
export function confirmations(secretsKey: string | undefined) {
  // Without SECRETS_KEY (a development setup), a key of this process: a confirm then holds on the process that issued
  // it only, which is every call of `slipway mcp` and of a single api.
  const key = createHmac('sha256', secretsKey ?? randomBytes(32))
    .update('slipway mcp destroy confirmation')
    .digest();
  const mac = (deploymentId: string, tokenId: string, exp: number) =>
    createHmac('sha256', key).update(`${deploymentId}\n${tokenId}\n${exp}`).digest('base64url');
  return {
    issue(deploymentId: string, tokenId: string, now = Date.now()) {
      const exp = Math.floor(now / 1000) + CONFIRM_TTL_S;
      return { confirm: `${exp}.${mac(deploymentId, tokenId, exp)}`, expiresAt: new Date(exp * 1000) };
    },
    check(confirm: string, deploymentId: string, tokenId: string, now = Date.now()): boolean {
      const [expText, given] = confirm.split('.');
      const exp = Number(expText);
      if (!Number.isInteger(exp) || !given || exp * 1000 < now) return false;
      const want = Buffer.from(mac(deploymentId, tokenId, exp));
      const got = Buffer.from(given);
      return want.length === got.length && timingSafeEqual(want, got);
    },
  };
}

const Preview = z.object({
  name: z.string(),
  status: z.string(),
  url: z.string().nullable(),
  replicas: z.number().int(),
  envVarNames: z.array(z.string()),
  effects: z.array(z.string()),
});

export function deploymentDestroyTool(
  deps: DeploymentsContext,
  project: (p: Principal, input: { deploymentId: string }) => Promise<string | undefined>,
): ToolDef {
  const confirms = confirmations(deps.config.SECRETS_KEY);
  return defineTool({
    name: 'destroy_deployment',
    title: 'Destroy a deployment',
    description:
      'Destroys a deployment for good, in two calls. The first (without confirm) changes nothing: it returns what ' +
      `will be destroyed and a confirm token valid ${CONFIRM_TTL_S} s. Show the preview to the user if one is ` +
      'present, then call again with the same deploymentId and confirm.',
    permission: 'deployment.manage',
    project,
    input: z.object({
      deploymentId: DeploymentIdParams.shape.id,
      confirm: z
        .string()
        .max(200)
        .optional()
        .meta({ description: 'The confirm token of this deployment’s preview; absent: get the preview' }),
    }),
    output: z.object({
      deploymentId: z.uuid(),
      destroyed: z.boolean(),
      preview: Preview.optional(),
      confirm: z.string().optional(),
      expiresAt: z.iso.datetime().optional(),
      next: Next.optional(),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    audit: { resource: 'deployment', id: (input) => input.deploymentId, skip: (input) => input.confirm === undefined },
    run: async ({ principal, input }) => {
      const { deploymentId } = input;
      const d = await deps.deployments.get(principal, deploymentId);
      if (input.confirm === undefined) {
        const { confirm, expiresAt } = confirms.issue(deploymentId, principal.token._id);
        return {
          deploymentId,
          destroyed: false,
          preview: {
            name: d.name,
            status: d.status,
            url: d.url ?? null,
            replicas: d.replicas ?? (d.status === 'running' ? 1 : 0),
            envVarNames: envNamesOf(d),
            effects: [
              'every container of every release is removed, with its logs',
              'the URL stops answering and is not given out again',
              'images built for it are removed; releases cannot be rolled back to',
              'every later read of the ID answers DEPLOYMENT_NOT_FOUND; this cannot be undone',
            ],
          },
          confirm,
          expiresAt: expiresAt.toISOString(),
          next: {
            tool: 'destroy_deployment',
            arguments: { deploymentId, confirm },
            why: 'Destroys it, once the user agrees.',
          },
        };
      }
      if (!confirms.check(input.confirm, deploymentId, principal.token._id)) {
        throw new AppError(
          'INVALID_REQUEST',
          'The confirm token is expired, or was not issued for this deployment and token; nothing was destroyed.',
          {
            deploymentId,
            next: { tool: 'destroy_deployment', arguments: { deploymentId }, why: 'Get a new preview and confirm.' },
          },
        );
      }
      await deps.deployments.destroy(principal, deploymentId);
      return { deploymentId, destroyed: true };
    },
  });
}
