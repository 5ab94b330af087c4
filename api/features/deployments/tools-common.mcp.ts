import { z } from 'zod';

import type { DeploymentRecord } from '@shared/deployments/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import type { Next } from '../../mcp/tool';
import type { DeploymentsContext } from './compose';
import { DeploymentIdParams } from './schemas';
import { Deployment } from './schemas.responses';
import { deploymentView } from './views';
import { SETTLED } from './wait';

/** What every deployment tool (here, in uploads' and builder's) shares: the ID input, the wait, the summary, `next`. */

/** Tools that name a deployment take its ID under this name: explicit on every call, no hidden session state. */
export const deploymentIdInput = { deploymentId: DeploymentIdParams.shape.id };

/** The SDK client's default request timeout is 60 s: a wait answers before it, with what to call to go on. */
export const WAIT_S = z.number().int().min(0).max(55).default(50).meta({
  description: 'Seconds to wait for a settled status (running, stopped, failed) before answering; 0 answers at once',
});

export const Summary = Deployment.pick({
  id: true,
  name: true,
  status: true,
  provider: true,
  url: true,
  updatedAt: true,
});
export const summary = (d: DeploymentRecord) => {
  const v = deploymentView(d);
  return { id: v.id, name: v.name, status: v.status, provider: v.provider, url: v.url, updatedAt: v.updatedAt };
};

/** The project a deployment lives in, for authorize; one the organisation does not hold resolves to none. */
export const deploymentProjectOf =
  (deps: Pick<DeploymentsContext, 'deployments'>) =>
  (principal: Principal, input: { deploymentId: string }): Promise<string | undefined> =>
    deps.deployments.get(principal, input.deploymentId).then(
      (d) => d.projectId,
      (err: unknown) => {
        if (err instanceof AppError && err.code === 'DEPLOYMENT_NOT_FOUND') return undefined;
        throw err;
      },
    );

/** What an agent should do after seeing a deployment in this status. */
export function nextFor(d: Pick<DeploymentRecord, '_id' | 'status'>): Next | undefined {
  const deploymentId = d._id;
  if (d.status === 'failed')
    return { tool: 'diagnose_deployment', arguments: { deploymentId }, why: 'It failed: read the cause and the fix.' };
  if (!SETTLED.includes(d.status))
    return {
      tool: 'wait_for_deployment',
      arguments: { deploymentId },
      why: `It is still ${d.status}; wait again (no polling loop needed).`,
    };
  return undefined;
}
