import { randomUUID } from 'node:crypto';

import type { Authz } from '@shared/authz/authorize';
import type { GitSourceCheck } from '@shared/build/git-source';
import type { Config } from '@shared/config';
import { AppError } from '@shared/errors';
import type { GitBindingStore } from '@shared/git-bindings/store';
import type { GitBindingRecord, GitConnectionRecord, GitProvider } from '@shared/git-bindings/types';
import { DEFAULT_BASE_URLS, newWebhookSecret, type WebhookSecretSealer } from '@shared/git-bindings/webhook-secrets';
import type { Principal } from '@shared/identity/service';
import type { KeyedLock } from '@shared/locks';
import { privateTargetReason } from '@shared/net-guard';
import { PLAN_POLICIES } from '@shared/plans';
import type { ProjectStore } from '@shared/projects/store';
import { gitSecretRefusal, type Vault } from '@shared/secrets/vault';

import type { DeploymentService } from '../deployments/service';
import { insertWithinPlan, listVisible } from '../owned';

/** The scopes a binding's deliveries may act with: what a redeploy from Git needs, and no more. */
export const DELIVERY_SCOPES = ['deployment.create', 'secret.use'] as const;

export interface GitServiceDeps {
  store: GitBindingStore;
  sealer: WebhookSecretSealer;
  vault: Pick<Vault, 'describe'>;
  gitSource: GitSourceCheck;
  deployments: Pick<DeploymentService, 'get'>;
  projects: Pick<ProjectStore, 'get'>;
  authz: Pick<Authz, 'authorize' | 'visibility' | 'sees'>;
  lock: KeyedLock;
  quotaMultiplier: number;
  config: Pick<Config, 'ALLOW_PRIVATE_GIT_HOSTS'>;
}

export const connectionNotFound = (id: string) =>
  new AppError(
    'GIT_CONNECTION_NOT_FOUND',
    `No Git connection ${id} in this organisation; list them with GET /platform/git/connections.`,
    { connectionId: id },
  );

export const bindingNotFound = (id: string) =>
  new AppError(
    'GIT_BINDING_NOT_FOUND',
    `No Git binding ${id} in this organisation; list them with GET /platform/git/bindings.`,
    {
      bindingId: id,
    },
  );

/** A host as a URL compares it: scheme, name and port, without a trailing path. */
const originOf = (url: string) => new URL(url).origin.toLowerCase();

/**
 * Git connections (a host and the org secret holding its token) and bindings (a repository's branch to a deployment
 * or a project, with the webhook secret its host signs pushes with). Counts are checked under one per-organisation
 * lock, which deleting a connection takes too, so a connection is never deleted while a binding is being made on it.
 */
export function createGitService(deps: GitServiceDeps) {
  const { store } = deps;
  const lockKey = (orgId: string) => `git:${orgId}`;

  async function getConnection(principal: Principal, id: string): Promise<GitConnectionRecord> {
    const c = await store.connections.get(principal.org._id, id);
    if (!c) throw connectionNotFound(id);
    return c;
  }

  async function getBinding(principal: Principal, id: string): Promise<GitBindingRecord> {
    const b = await store.bindings.get(principal.org._id, id);
    // A binding of a project the caller cannot see reads exactly as an unknown one.
    if (!b || !deps.authz.sees(await deps.authz.visibility(principal), b.projectId ?? undefined))
      throw bindingNotFound(id);
    return b;
  }

  /** The base URL a connection names, or its provider's; https only (http where private Git hosts are allowed). */
  async function baseUrlOf(provider: GitProvider, given: string | undefined): Promise<string> {
    const baseUrl = given ?? (provider === 'generic' ? undefined : DEFAULT_BASE_URLS[provider]);
    if (!baseUrl)
      throw new AppError('INVALID_REQUEST', 'A generic connection needs baseUrl: the https:// URL of the Git host.', {
        provider,
      });
    const url = new URL(baseUrl);
    if (url.protocol !== 'https:' && !(deps.config.ALLOW_PRIVATE_GIT_HOSTS && url.protocol === 'http:'))
      throw new AppError(
        'INVALID_REQUEST',
        `baseUrl must be https:// (got ${url.protocol}//): a token is sent over https only.`,
        {
          baseUrl,
        },
      );
    const blocked = await privateTargetReason(url, { allowPrivate: deps.config.ALLOW_PRIVATE_GIT_HOSTS });
    if (blocked)
      throw new AppError('INVALID_REQUEST', `baseUrl is refused: ${blocked}. Use a publicly reachable Git host.`, {
        baseUrl,
      });
    return url.href.replace(/\/$/, '');
  }

  return {
    getConnection,
    getBinding,

    async createConnection(
      principal: Principal,
      body: { provider: GitProvider; baseUrl?: string | undefined; tokenSecretId: string },
    ): Promise<GitConnectionRecord> {
      const orgId = principal.org._id;
      // The connection hands its token to every binding made on it: naming it needs what sending a secret needs.
      await deps.authz.authorize(principal, 'secret.use');
      const baseUrl = await baseUrlOf(body.provider, body.baseUrl);
      const secret = await deps.vault.describe(orgId, body.tokenSecretId);
      if (!secret)
        throw new AppError(
          'INVALID_REQUEST',
          `tokenSecretId ${body.tokenSecretId} is not a secret of this organisation; create one with POST /platform/secrets.`,
          { tokenSecretId: body.tokenSecretId },
        );
      const refusal = gitSecretRefusal(secret, {
        url: baseUrl,
        // The secret's own environment: every redeploy through the connection names it, whatever the org's default.
        environment: secret.environment,
        allowHttp: deps.config.ALLOW_PRIVATE_GIT_HOSTS,
      });
      if (refusal)
        throw new AppError('INVALID_REQUEST', `tokenSecretId is refused: ${refusal}.`, {
          tokenSecretId: body.tokenSecretId,
        });
      const record: GitConnectionRecord = {
        _id: randomUUID(),
        orgId,
        provider: body.provider,
        baseUrl,
        tokenSecretId: body.tokenSecretId,
        vaultEnvironment: secret.environment,
        createdBy: principal.user._id,
        createdAt: new Date(),
      };
      const max = PLAN_POLICIES[principal.org.plan].git.maxConnections * deps.quotaMultiplier;
      await insertWithinPlan({
        lock: deps.lock,
        key: lockKey(orgId),
        what: 'Git connections and bindings',
        over: async () => {
          const count = await store.connections.count(orgId);
          return count + 1 > max
            ? new AppError(
                'QUOTA_EXCEEDED',
                `The ${principal.org.plan} plan allows ${max} Git connections; the organisation has ${count}: delete one first.`,
                { max, count },
              )
            : undefined;
        },
        insert: () => store.connections.insert(record),
        taken: () => new AppError('CONFLICT', 'That Git connection exists already.'),
      });
      return record;
    },

    listConnections: (principal: Principal, q: { limit: number; offset: number }) =>
      store.connections.list(principal.org._id, q),

    /** Refused (409) while a binding uses it: deleting it would leave those bindings without their token. */
    async removeConnection(principal: Principal, id: string): Promise<GitConnectionRecord> {
      const c = await getConnection(principal, id);
      await deps.lock(lockKey(principal.org._id), 'Git connections and bindings', async () => {
        const using = await store.bindings.usingConnection(id);
        if (using > 0)
          throw new AppError(
            'GIT_CONNECTION_IN_USE',
            `Git connection ${id} is used by ${using} binding${using === 1 ? '' : 's'}; delete ${using === 1 ? 'it' : 'them'} (DELETE /platform/git/bindings/{id}) first.`,
            { connectionId: id, bindings: using },
          );
        await store.connections.remove(id);
      });
      return c;
    },

    /**
     * A binding of a repository's branch to a deployment (or to a project's deployments built from it), with a new
     * webhook secret returned once. The repository is held to a source deploy's Git rules; with a connection, the
     * connection's token must be one the caller may send to that repository.
     */
    async createBinding(
      principal: Principal,
      body: {
        connectionId?: string | undefined;
        repoUrl: string;
        branch: string;
        deploymentId?: string | undefined;
        projectId?: string | undefined;
      },
    ): Promise<{ record: GitBindingRecord; secret: string }> {
      const orgId = principal.org._id;
      let projectId: string | null;
      if (body.deploymentId) projectId = (await deps.deployments.get(principal, body.deploymentId)).projectId ?? null;
      else {
        if (!(await deps.projects.get(orgId, body.projectId!)))
          throw new AppError('PROJECT_NOT_FOUND', `No project ${body.projectId} in this organisation.`, {
            projectId: body.projectId,
          });
        projectId = body.projectId!;
      }
      // Every push becomes a redeploy: the binding is made only by someone who may redeploy there.
      await deps.authz.authorize(principal, 'deployment.create', projectId ? { projectId } : {});
      const connection = body.connectionId ? await getConnection(principal, body.connectionId) : undefined;
      if (connection && originOf(body.repoUrl) !== originOf(connection.baseUrl))
        throw new AppError(
          'INVALID_REQUEST',
          `repoUrl is on ${originOf(body.repoUrl)}, not on the connection’s host ${connection.baseUrl}; use a repository there or another connection.`,
          { repoUrl: body.repoUrl, connectionId: connection._id },
        );
      if (connection)
        await deps.gitSource.secret(principal, connection.tokenSecretId, body.repoUrl, connection.vaultEnvironment);
      await deps.gitSource.repoUrl(body.repoUrl);
      const secret = newWebhookSecret();
      const _id = randomUUID();
      const record: GitBindingRecord = {
        _id,
        orgId,
        projectId,
        connectionId: connection?._id ?? null,
        provider: connection?.provider ?? null,
        repoUrl: body.repoUrl,
        branch: body.branch,
        target: body.deploymentId
          ? { type: 'deployment', deploymentId: body.deploymentId }
          : { type: 'project', projectId: body.projectId! },
        secretSealed: deps.sealer.seal({ _id, orgId }, secret),
        scopes: DELIVERY_SCOPES.filter((s) => principal.token.scopes.includes(s)),
        createdBy: principal.user._id,
        createdAt: new Date(),
      };
      const max = PLAN_POLICIES[principal.org.plan].git.maxBindings * deps.quotaMultiplier;
      await insertWithinPlan({
        lock: deps.lock,
        key: lockKey(orgId),
        what: 'Git connections and bindings',
        over: async () => {
          if (connection && !(await store.connections.get(orgId, connection._id)))
            return connectionNotFound(connection._id);
          const count = await store.bindings.count(orgId);
          return count + 1 > max
            ? new AppError(
                'QUOTA_EXCEEDED',
                `The ${principal.org.plan} plan allows ${max} Git bindings; the organisation has ${count}: delete one first.`,
                { max, count },
              )
            : undefined;
        },
        insert: () => store.bindings.insert(record),
        taken: () => new AppError('CONFLICT', 'That Git binding exists already.'),
      });
      return { record, secret };
    },

    listBindings: (principal: Principal, q: { projectId?: string | undefined; limit: number; offset: number }) =>
      listVisible(deps.authz, principal, q, (f) => store.bindings.list(principal.org._id, f)),

    async removeBinding(principal: Principal, id: string): Promise<GitBindingRecord> {
      const b = await getBinding(principal, id);
      await store.bindings.remove(id);
      await store.deliveries.removeOfBinding(id);
      return b;
    },

    async deliveries(principal: Principal, id: string, q: { limit: number; offset: number }) {
      await getBinding(principal, id);
      return store.deliveries.list(id, q);
    },
  };
}

export type GitService = ReturnType<typeof createGitService>;
