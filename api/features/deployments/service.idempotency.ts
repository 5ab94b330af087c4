import { v5 as uuidv5 } from 'uuid';

import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import type { DeploymentServiceDeps } from './service.deps';
import type { DeploymentWorkflows } from './service.workflow';

/** Namespace of idempotent deployment IDs: uuidv5(orgId + ":" + idempotencyKey). */
const IDEMPOTENCY_NAMESPACE = '8f1d7a52-4c1e-4f7e-9a3b-2d5c6e7f8a90';

/** With an idempotency key, the deployment's ID is fixed by it: the same request always names the same deployment. */
export const idFor = (principal: Pick<Principal, 'org'>, idempotencyKey: string) =>
  uuidv5(`${principal.org._id}:${idempotencyKey}`, IDEMPOTENCY_NAMESPACE);

/**
 * A deploy's idempotency key: `duplicate` refuses a repeated one (for the create), `methods` are what the routes ask
 * about a key before they spend anything.
 */
export function createIdempotency(deps: Pick<DeploymentServiceDeps, 'store'>, workflows: DeploymentWorkflows) {
  const { store } = deps;

  async function duplicate(principal: Principal, id: string, idempotencyKey: string): Promise<never> {
    // The first request may have died between its insert and its workflow start: finish it, start nothing new.
    const first = await store.findAny(id);
    if (first && !first.destroyedAt) await workflows.ensureWorkflow(first, principal);
    // The message and details name the key by its body field, the name the caller knows.
    throw new AppError(
      'DUPLICATE_REQUEST',
      `requestId "${idempotencyKey}" was already used: it made deployment ${id}, and no second deployment was started. ` +
        'Follow that deployment, or send a new requestId to deploy again.',
      { deploymentId: id, requestId: idempotencyKey },
    );
  }

  const methods = {
    /** The ID a deploy with `idempotencyKey` makes (or made): a caller can record it before the deploy happens. */
    deploymentIdFor: (principal: Pick<Principal, 'org'>, idempotencyKey: string): string =>
      idFor(principal, idempotencyKey),

    /** Whether this organisation already used `idempotencyKey` for a deploy (destroyed deployments included). */
    async idempotencyKeyUsed(principal: Principal, idempotencyKey: string): Promise<boolean> {
      return (await store.findAny(idFor(principal, idempotencyKey))) !== null;
    },

    /**
     * A deploy repeating an idempotency key creates nothing, so it is answered before any creation budget, quota slot
     * or source check is spent: DUPLICATE_REQUEST naming the deployment the first request made. A new (or no) key
     * returns.
     */
    async refuseReplay(principal: Principal, idempotencyKey: string | undefined): Promise<void> {
      if (idempotencyKey === undefined) return;
      const id = idFor(principal, idempotencyKey);
      if (await store.findAny(id)) await duplicate(principal, id, idempotencyKey);
    },
  };

  return { duplicate, methods };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
