import { randomBytes, randomUUID } from 'node:crypto';

import type { Client } from '@temporalio/client';

import type { Authz } from '@shared/authz/authorize';
import type { Config } from '@shared/config';
import { checkDomainSignal, DOMAIN_WORKFLOW, domainWorkflowId } from '@shared/contracts/domain';
import { HostnameError, normalizeHostname } from '@shared/domains/hostname';
import type { DomainStore } from '@shared/domains/store';
import type { DomainRecord } from '@shared/domains/types';
import type { DomainVerifier, VerifyOutcome } from '@shared/domains/verify';
import { deploymentHost } from '@shared/edge';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { KeyedLock } from '@shared/locks';
import type { Logger } from '@shared/logger';
import { PLAN_POLICIES } from '@shared/plans';

import type { DeploymentService } from '../deployments/service';
import { insertWithinPlan, listVisible } from '../owned';

export interface DomainServiceDeps {
  store: DomainStore;
  verifier: DomainVerifier;
  deployments: Pick<DeploymentService, 'get'>;
  authz: Pick<Authz, 'visibility' | 'sees'>;
  lock: KeyedLock;
  temporal: Client;
  log: Pick<Logger, 'warn'>;
  config: Pick<
    Config,
    | 'EDGE_DOMAIN'
    | 'TEMPORAL_TASK_QUEUE'
    | 'QUOTA_MULTIPLIER'
    | 'DOMAIN_CHECK_FIRST_S'
    | 'DOMAIN_CHECK_MAX_S'
    | 'DOMAIN_CHECK_WINDOW_H'
  >;
}

export const domainNotFound = (id: string) =>
  new AppError('DOMAIN_NOT_FOUND', `No domain ${id} in this organisation; list them with GET /platform/domains.`, {
    domainId: id,
  });

const hostnameTaken = (hostname: string) =>
  new AppError(
    'HOSTNAME_TAKEN',
    `${hostname} is verified by another organisation, so it cannot be added or verified here. If it is yours, remove the other organisation's claim there, or use another host name.`,
    { hostname },
  );

/**
 * Custom domains (docs/architecture.md, "Custom domains"): a record per (organisation, host), checked at once by
 * verify and in the background by the domain's workflow, which also puts its route on the edge router once verified
 * and takes it off once deleted. Which organisation holds a verified host is the claim's unique key
 * (shared/domains/verify.ts), so a pending claim never blocks the real owner.
 */
export function createDomainService(deps: DomainServiceDeps) {
  const { store, config } = deps;

  async function get(principal: Principal, id: string): Promise<DomainRecord> {
    const d = await store.get(principal.org._id, id);
    if (!d) throw domainNotFound(id);
    return d;
  }

  /** Checks now: a new run when none is running, else a signal to the running one. */
  async function nudge(domainId: string): Promise<void> {
    try {
      await deps.temporal.workflow.signalWithStart(DOMAIN_WORKFLOW, {
        workflowId: domainWorkflowId(domainId),
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        args: [
          {
            domainId,
            firstS: config.DOMAIN_CHECK_FIRST_S,
            maxS: config.DOMAIN_CHECK_MAX_S,
            windowS: Math.round(config.DOMAIN_CHECK_WINDOW_H * 3600),
          },
        ],
        signal: checkDomainSignal,
        signalArgs: [],
      });
    } catch (err) {
      // The record is the truth and a verify starts it again; the answer already says what DNS holds.
      deps.log.warn({ err, domainId }, 'the domain workflow was not told; a verify starts it again');
    }
  }

  return {
    get,

    async create(principal: Principal, body: { hostname: string; deploymentId: string }): Promise<DomainRecord> {
      let hostname: string;
      try {
        hostname = normalizeHostname(body.hostname, { edgeDomain: config.EDGE_DOMAIN });
      } catch (err) {
        if (err instanceof HostnameError) throw new AppError('INVALID_REQUEST', err.message, { field: 'hostname' });
        throw err;
      }
      const deployment = await deps.deployments.get(principal, body.deploymentId);
      const orgId = principal.org._id;
      const claim = await store.claims.live(hostname);
      if (claim && claim.orgId !== orgId) throw hostnameTaken(hostname);
      const record: DomainRecord = {
        _id: randomUUID(),
        orgId,
        projectId: deployment.projectId ?? null,
        deploymentId: deployment._id,
        hostname,
        stableHost: deploymentHost(deployment.name, deployment._id, config.EDGE_DOMAIN),
        token: `slipway-verify=${randomBytes(18).toString('base64url')}`,
        status: 'pending',
        lastCheck: null,
        verifiedAt: null,
        routedAt: null,
        createdBy: principal.user._id,
        createdAt: new Date(),
      };
      const max = PLAN_POLICIES[principal.org.plan].domains.maxCount * config.QUOTA_MULTIPLIER;
      await insertWithinPlan({
        lock: deps.lock,
        key: `domains:${orgId}`,
        what: 'domain quota',
        over: async () => {
          const count = await store.count(orgId);
          if (count + 1 <= max) return undefined;
          return new AppError(
            'QUOTA_EXCEEDED',
            `The ${principal.org.plan} plan allows ${max} custom domains; this organisation has ${count}: delete one first.`,
            { maxCount: max, count },
          );
        },
        insert: () => store.insert(record),
        taken: () =>
          new AppError(
            'CONFLICT',
            `${hostname} is already added in this organisation; find it with GET /platform/domains and verify or delete it.`,
            { hostname },
          ),
      });
      await nudge(record._id);
      return record;
    },

    async list(
      principal: Principal,
      q: { projectId?: string | undefined; deploymentId?: string | undefined; limit: number; offset: number },
    ) {
      return listVisible(deps.authz, principal, q, (filter) =>
        store.list(principal.org._id, { ...filter, ...(q.deploymentId ? { deploymentId: q.deploymentId } : {}) }),
      );
    },

    /**
     * Checks DNS now and answers with what it found; a verified domain's route is then added by its workflow
     * (`routed` turns true within seconds). 409 when another organisation verified the host first.
     */
    async verify(principal: Principal, id: string): Promise<{ domain: DomainRecord; outcome: VerifyOutcome }> {
      const d = await get(principal, id);
      const { outcome } = await deps.verifier.verify(d);
      await nudge(d._id);
      if (outcome === 'taken') throw hostnameTaken(d.hostname);
      return { domain: await get(principal, id), outcome };
    },

    /** Deletes the record and releases its claim; the workflow then takes its route off the edge router. */
    async remove(principal: Principal, id: string): Promise<DomainRecord> {
      const d = await get(principal, id);
      await store.remove(d._id);
      await store.claims.removeOf(d._id);
      await nudge(d._id);
      return d;
    },
  };
}

export type DomainService = ReturnType<typeof createDomainService>;
