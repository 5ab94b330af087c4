import { randomUUID } from 'node:crypto';

import type { AuditStore } from '@shared/audit/store';
import type { Authz } from '@shared/authz/authorize';
import { isDuplicateKey } from '@shared/db/mongo';
import { AppError } from '@shared/errors';
import { type DeliveryHeaders, readPush, verifyDelivery } from '@shared/git-bindings/signatures';
import type { GitBindingStore } from '@shared/git-bindings/store';
import type { GitBindingRecord, GitDeliveryRecord, ShippedRelease } from '@shared/git-bindings/types';
import type { WebhookSecretSealer } from '@shared/git-bindings/webhook-secrets';
import type { Principal } from '@shared/identity/service';
import type { IdentityStore } from '@shared/identity/store';
import type { Logger } from '@shared/logger';
import type { Permission } from '@shared/permissions';
import type { Redis } from '@shared/redis';
import type { SecretEnvironment } from '@shared/secrets/store';

import type { DeploymentService } from '../deployments/service';

/** Refused deliveries recorded per binding per hour: past it they are answered 401 and only logged. */
export const REFUSED_RECORDS_PER_HOUR = 20;
/** The deployments of a project binding one push ships at most (more are listed in the delivery's reason). */
const PROJECT_TARGETS_MAX = 20;
/** A delivery ID longer than this is not a provider's (a UUID, or GitHub's GUID): cut, so no sender fills the store. */
const DELIVERY_ID_MAX = 200;

export interface HookReceiverDeps {
  store: GitBindingStore;
  sealer: WebhookSecretSealer;
  identity: Pick<IdentityStore, 'getOrg' | 'getUser'>;
  authz: Pick<Authz, 'authorize'>;
  deployments: Pick<DeploymentService, 'redeploy' | 'list'>;
  audit: Pick<AuditStore, 'append'>;
  redis: Redis;
  keyPrefix: string;
  log: Logger;
}

export interface HookAnswer {
  status: 200 | 202;
  id: string | null;
  outcome: 'shipped' | 'ignored' | 'duplicate';
  reason: string | null;
  releases: ShippedRelease[];
}

const failed = (reason: string) => ({ outcome: 'failed' as const, reason });

/**
 * The hooks origin's work: a delivery is verified with its binding's secret before anything of it is believed, then
 * claimed by its delivery ID (a unique index: a replay conflicts and starts nothing), then, for a push to the bound
 * branch, shipped through the deployments' redeploy (its Git rules, quotas and workflow) as the binding's creator,
 * with no more scopes than the creator's token held of what a redeploy needs, and audited as the system's act.
 */
export function createHookReceiver(deps: HookReceiverDeps) {
  const { store, log } = deps;

  /** A refused delivery is listed, up to a few an hour per binding, so an attacker cannot fill the store. */
  async function recordRefused(
    binding: GitBindingRecord,
    base: Omit<GitDeliveryRecord, 'outcome' | 'reason'>,
    reason: string,
  ) {
    const key = `${deps.keyPrefix}git-refused:${binding._id}:${Math.floor(Date.now() / 3_600_000)}`;
    const n = await deps.redis.incr(key);
    if (n === 1) await deps.redis.expire(key, 3600);
    if (n > REFUSED_RECORDS_PER_HOUR) return;
    await store.deliveries.insert({ ...base, key: `refused:${randomUUID()}`, outcome: 'refused', reason });
  }

  /** The binding's creator as a principal holding only the delivery scopes the binding kept; undefined if gone. */
  async function actingAs(binding: GitBindingRecord): Promise<Principal | undefined> {
    const [org, user] = await Promise.all([
      deps.identity.getOrg(binding.orgId),
      deps.identity.getUser(binding.orgId, binding.createdBy),
    ]);
    if (!org || !user) return undefined;
    return {
      org,
      user,
      token: {
        _id: `git-binding:${binding._id}`,
        name: `Git binding ${binding._id}`,
        scopes: binding.scopes as Permission[],
        expiresAt: new Date(8.64e15),
      },
    };
  }

  /** The deployments a push ships to: the one bound, or the project's deployments built from the repository. */
  async function targetsOf(principal: Principal, binding: GitBindingRecord): Promise<string[]> {
    if (binding.target.type === 'deployment') return [binding.target.deploymentId];
    const { items } = await deps.deployments.list(principal, {
      projectId: binding.target.projectId,
      limit: 100,
      offset: 0,
    });
    return items
      .filter((d) => d.source.type === 'git' && d.source.repoUrl === binding.repoUrl)
      .map((d) => d._id)
      .slice(0, PROJECT_TARGETS_MAX);
  }

  async function ship(
    binding: GitBindingRecord,
    commit: string,
    requestId: string,
  ): Promise<Pick<GitDeliveryRecord, 'outcome' | 'reason' | 'releases'>> {
    const principal = await actingAs(binding);
    if (!principal)
      return {
        ...failed('the binding’s creator is no longer a member of the organisation; make the binding again'),
        releases: [],
      };
    try {
      await deps.authz.authorize(
        principal,
        'deployment.create',
        binding.projectId ? { projectId: binding.projectId } : {},
      );
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { ...failed(`the binding’s creator may no longer redeploy here: ${err.message}`), releases: [] };
    }
    const targets = await targetsOf(principal, binding);
    if (targets.length === 0)
      return {
        outcome: 'ignored',
        reason: `no deployment of project ${binding.projectId} is built from ${binding.repoUrl}; deploy one from it first`,
        releases: [],
      };
    let token: { gitTokenSecretId: string; vaultEnvironment: SecretEnvironment } | undefined;
    if (binding.connectionId) {
      const connection = await store.connections.get(binding.orgId, binding.connectionId);
      if (!connection) return { ...failed('the binding’s connection is gone; make the binding again'), releases: [] };
      token = { gitTokenSecretId: connection.tokenSecretId, vaultEnvironment: connection.vaultEnvironment };
    }
    const releases: ShippedRelease[] = [];
    const refusals: string[] = [];
    for (const deploymentId of targets) {
      let status = 202;
      try {
        const accepted = await deps.deployments.redeploy(principal, deploymentId, {
          git: {
            repoUrl: binding.repoUrl,
            branch: binding.branch,
            commit,
            ...token,
          },
        });
        releases.push({ deploymentId, commandId: accepted.command.id });
      } catch (err) {
        if (!(err instanceof AppError)) {
          log.error({ err, requestId, bindingId: binding._id, deploymentId }, 'Git push redeploy failed');
          status = 500;
          refusals.push(`${deploymentId}: internal error (request ${requestId}); send the delivery again`);
        } else {
          status = err.status;
          refusals.push(`${deploymentId}: ${err.message}`);
        }
      }
      await deps.audit
        .append({
          _id: randomUUID(),
          at: new Date(),
          orgId: binding.orgId,
          ...(binding.projectId ? { projectId: binding.projectId } : {}),
          actor: { type: 'system', userId: binding.createdBy },
          action: 'deployment.redeploy',
          resource: { type: 'deployment', id: deploymentId },
          outcome: status < 400 ? 'success' : status === 404 ? 'denied' : 'failure',
          status,
          origin: 'hooks',
          requestId,
        })
        .catch((err: unknown) =>
          log.error({ err, requestId, action: 'deployment.redeploy' }, 'audit event not written'),
        );
    }
    return refusals.length
      ? { ...failed(refusals.join('; ')), releases }
      : { outcome: 'shipped', reason: null, releases };
  }

  return {
    async receive(bindingId: string, headers: DeliveryHeaders, raw: Buffer, requestId: string): Promise<HookAnswer> {
      const binding = await store.bindings.getAny(bindingId);
      if (!binding) throw new AppError('GIT_BINDING_NOT_FOUND', `No Git binding ${bindingId}; check the webhook URL.`);
      const verified = verifyDelivery(headers, raw, deps.sealer.open(binding), binding.provider);
      const base = {
        _id: randomUUID(),
        orgId: binding.orgId,
        bindingId,
        deliveryId: null,
        provider: verified.provider,
        event: null,
        ref: null,
        commit: null,
        receivedAt: new Date(),
        releases: [],
      };
      if (!verified.ok) {
        await recordRefused(binding, { ...base, key: '' }, verified.reason);
        throw new AppError(
          'SIGNATURE_INVALID',
          `The delivery is refused: ${verified.reason}. Sign it with the webhook secret the binding was created with.`,
        );
      }
      const deliveryId = verified.deliveryId?.slice(0, DELIVERY_ID_MAX);
      if (!deliveryId)
        throw new AppError(
          'INVALID_REQUEST',
          'The delivery carries no delivery ID (X-GitHub-Delivery, X-Gitlab-Event-UUID, X-Gitea-Delivery or X-Slipway-Delivery): replays could not be told apart.',
        );
      const push = verified.event === 'push' ? readPush(verified.provider, raw) : undefined;
      const record: GitDeliveryRecord = {
        ...base,
        key: deliveryId,
        deliveryId,
        event: verified.event.slice(0, 100),
        ref: push?.ref?.slice(0, 300) ?? null,
        commit: push?.kind === 'push' ? push.commit : null,
        outcome: 'received',
        reason: null,
      };
      try {
        await store.deliveries.insert(record);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        return {
          status: 200,
          id: null,
          outcome: 'duplicate',
          reason: `delivery ${deliveryId} was received before`,
          releases: [],
        };
      }
      const wanted = `refs/heads/${binding.branch}`;
      let settled: Pick<GitDeliveryRecord, 'outcome' | 'reason' | 'releases'>;
      if (!push)
        settled = {
          outcome: 'ignored',
          reason: verified.event === 'ping' ? 'ping' : `event ${verified.event || '(none)'} is not a push`,
          releases: [],
        };
      else if (push.kind === 'malformed') settled = { ...failed(push.why), releases: [] };
      else if (push.kind === 'deletion')
        settled = { outcome: 'ignored', reason: `deletion of ${push.ref}`, releases: [] };
      else if (push.ref !== wanted)
        settled = { outcome: 'ignored', reason: `other branch: ${push.ref}, bound to ${wanted}`, releases: [] };
      else settled = await ship(binding, push.commit, requestId);
      await store.deliveries.settle(record._id, settled);
      if (settled.outcome === 'failed')
        throw new AppError('INVALID_REQUEST', `The delivery was accepted but nothing shipped: ${settled.reason}`, {
          deliveryId: record._id,
        });
      return {
        status: settled.outcome === 'shipped' ? 202 : 200,
        id: record._id,
        outcome: settled.outcome === 'shipped' ? 'shipped' : 'ignored',
        reason: settled.reason,
        releases: settled.releases,
      };
    },
  };
}

export type HookReceiver = ReturnType<typeof createHookReceiver>;
