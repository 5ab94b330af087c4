import type { NextFunction, Request, RequestHandler, Response } from 'express';

import { ignore } from '@shared/ignore';

import { principalOf } from '../../http/auth';
import { IDEMPOTENCY_FIELD } from '../../http/fields';
import { newDeploymentProject } from './access';
import type { DeploymentsContext } from './compose';

/** Runs one middleware as a step: resolves when it calls next(), rejects with what it passed on. */
const step = (mw: RequestHandler, req: Request, res: Response) =>
  new Promise<void>((resolve, reject) => {
    void mw(req, res, (err?: unknown) => (err ? reject(err) : resolve()));
  });

/**
 * First on a route that creates a deployment: a body repeating a requestId this organisation already used creates
 * nothing, so it is answered DUPLICATE_REQUEST (naming the first deployment) before any creation budget is spent. A
 * client retrying after a lost answer gets the same 409 however often it asks, never a 429 for a deployment it
 * already has. `spend` is what a replay costs instead (on the compat API, a read: it is answered like a look-up).
 *
 * Only a caller the route would let deploy is answered here, judged as the route's own check judges it; anyone else
 * goes on to the route's limits and checks and is refused exactly as without a requestId, so what earlier requestIds
 * made stays out of reach of a token that may not deploy. The body is not validated yet: a requestId that is not a
 * string is the validator's to refuse.
 */
export function answerReplays(
  ctx: Pick<DeploymentsContext, 'deployments' | 'authz'>,
  spend?: RequestHandler,
): RequestHandler {
  const mayDeploy = async (req: Request) => {
    const projectId = await newDeploymentProject.project?.(req);
    return ctx.authz
      .authorize(principalOf(req), 'deployment.create', { projectId })
      .then(() => true, ignore("refused, or the check failed: the route's own check answers it", false));
  };
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const idempotencyKey: unknown = (req.body as Record<string, unknown> | undefined)?.[IDEMPOTENCY_FIELD];
      if (typeof idempotencyKey !== 'string' || !idempotencyKey) return next();
      const principal = principalOf(req);
      if (!(await ctx.deployments.idempotencyKeyUsed(principal, idempotencyKey)) || !(await mayDeploy(req)))
        return next();
      if (spend) await step(spend, req, res);
      await ctx.deployments.refuseReplay(principal, idempotencyKey);
      next();
    } catch (err) {
      next(err);
    }
  };
}
