import { randomUUID } from 'node:crypto';

import type { Authz } from '@shared/authz/authorize';
import type { GitSourceCheck } from '@shared/build/git-source';
import { isDuplicateKey } from '@shared/db/mongo';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { KeyedLock } from '@shared/locks';
import type { Logger } from '@shared/logger';
import type { OrgSettingsReader } from '@shared/org-settings/store';
import type { ProjectChange, ProjectStore } from '@shared/projects/store';
import type { ProjectFields, ProjectRecord } from '@shared/projects/types';
import { logFailure } from '@shared/request-context';

import type { DeploymentService } from '../deployments/service';
import { createMemberService } from './members';

export interface ProjectServiceDeps {
  store: ProjectStore;
  git: GitSourceCheck;
  deployments: Pick<DeploymentService, 'list' | 'destroy'>;
  authz: Pick<Authz, 'authorize' | 'visibility'>;
  users: Parameters<typeof createMemberService>[0]['users'];
  lock: KeyedLock;
  log: Pick<Logger, 'warn'>;
  /** A project without a vaultEnvironment reads the organisation's default vault, as its deploys do. */
  orgSettings: OrgSettingsReader;
}

export const projectNotFound = (id: string) =>
  new AppError('PROJECT_NOT_FOUND', `No project ${id} in this organisation.`, { projectId: id });

const nameTaken = (name: string) =>
  new AppError('CONFLICT', `A project named "${name}" already exists in this organisation; choose another name.`, {
    name,
  });

/** How many of a project's deployments a refusal names; the rest are counted. */
const NAMED_IN_REFUSAL = 10;
/** Pages of deployments a forced delete destroys, at most (100 each): far beyond any plan's live deployments. */
const FORCE_PAGES = 50;

/** Projects of an organisation (fields fixed by the interface): the fields, their Git source's rules, and deletion. */
export function createProjectService(deps: ProjectServiceDeps) {
  const { store } = deps;

  async function get(principal: Principal, id: string): Promise<ProjectRecord> {
    const p = await store.get(principal.org._id, id);
    if (!p) throw projectNotFound(id);
    return p;
  }

  /**
   * The Git source of a project is held to a deploy's rules (one code path, shared/build/git-source.ts): a
   * repoUrl reachable publicly, a gitTokenSecretId the caller may send, bound to repoUrl's host and in the project's
   * vault environment. Checked on the fields as they will be after the write.
   */
  async function checkGit(principal: Principal, next: Partial<ProjectFields>, touched: boolean) {
    if (!touched) return;
    // In a deploy's order: the secret, then the repository's address.
    if (next.gitTokenSecretId) {
      if (!next.repoUrl) {
        throw new AppError(
          'INVALID_REQUEST',
          'gitTokenSecretId needs the repoUrl it is sent to; set repoUrl (https://) as well, or leave gitTokenSecretId out.',
          { gitTokenSecretId: next.gitTokenSecretId },
        );
      }
      const environment =
        next.vaultEnvironment ?? (await deps.orgSettings.of(principal.org._id)).defaultVaultEnvironment;
      await deps.git.secret(principal, next.gitTokenSecretId, next.repoUrl, environment);
    }
    if (next.repoUrl) await deps.git.repoUrl(next.repoUrl);
  }

  /** Every live deployment of the project (the platform list shows a page; deletion needs them all). */
  async function liveDeployments(principal: Principal, projectId: string) {
    const { items, total } = await deps.deployments.list(principal, { projectId, limit: 100, offset: 0 });
    return { items, total };
  }

  return {
    get,

    /** The project and how many live deployments it holds. */
    async describe(principal: Principal, id: string) {
      const project = await get(principal, id);
      const { total } = await deps.deployments.list(principal, { projectId: id, limit: 1, offset: 0 });
      return { project, deploymentCount: total };
    },

    /** Org owners and admins see every project; others the projects they are members of. */
    async list(principal: Principal, q: { limit: number; offset: number }) {
      const v = await deps.authz.visibility(principal);
      return store.list(principal.org._id, { ...q, ...(v.all ? {} : { ids: v.projectIds }) });
    },

    /** The creator becomes the project's admin, so whoever made it can run it whatever their org role. */
    async create(principal: Principal, fields: ProjectFields): Promise<ProjectRecord> {
      await checkGit(principal, fields, true);
      const now = new Date();
      const record: ProjectRecord = {
        _id: randomUUID(),
        orgId: principal.org._id,
        ...Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)),
        name: fields.name,
        createdAt: now,
        updatedAt: now,
        createdBy: principal.user._id,
      };
      try {
        await store.insert(record);
      } catch (err) {
        if (isDuplicateKey(err)) throw nameTaken(fields.name);
        throw err;
      }
      try {
        await store.addMember({
          projectId: record._id,
          orgId: record.orgId,
          userId: principal.user._id,
          role: 'admin',
          addedAt: now,
          addedBy: principal.user._id,
        });
      } catch (err) {
        // A project nobody administers is not left behind: the caller retries the whole creation.
        await store
          .remove(record.orgId, record._id)
          .catch(logFailure(deps.log, 'a project with no admin was left behind; delete it', { projectId: record._id }));
        throw err;
      }
      return record;
    },

    /** A partial update: absent fields stay, null removes an optional one; the name stays unique in the org. */
    async update(principal: Principal, id: string, change: ProjectChange): Promise<ProjectRecord> {
      const current = await get(principal, id);
      const gitTouched = (['repoUrl', 'gitTokenSecretId', 'vaultEnvironment'] as const).some(
        (k) => change[k] !== undefined,
      );
      const merged = { ...current } as Partial<ProjectFields>;
      for (const [k, v] of Object.entries(change) as [keyof ProjectFields, string | null | undefined][]) {
        if (v === null) delete merged[k];
        else if (v !== undefined) (merged as Record<string, string>)[k] = v;
      }
      await checkGit(principal, merged, gitTouched);
      try {
        const updated = await store.update(principal.org._id, id, change);
        if (!updated) throw projectNotFound(id);
        return updated;
      } catch (err) {
        if (isDuplicateKey(err)) throw nameTaken(change.name!);
        throw err;
      }
    },

    /**
     * Refused while the project holds live deployments, naming them; with `force`, they are destroyed first (each
     * through its workflow, as DELETE /deployments/{id} does), which needs deployment.manage in the project too.
     */
    async remove(principal: Principal, id: string, force: boolean): Promise<void> {
      const project = await get(principal, id);
      let live = await liveDeployments(principal, id);
      if (live.total > 0 && !force) {
        const named = live.items.slice(0, NAMED_IN_REFUSAL).map((d) => `${d.name} (${d._id})`);
        const more = live.total > named.length ? ` and ${live.total - named.length} more` : '';
        throw new AppError(
          'INVALID_REQUEST',
          `Project "${project.name}" still has ${live.total} live deployment${live.total === 1 ? '' : 's'}: ${named.join(', ')}${more}. ` +
            'Destroy them first, or delete with ?force=true to destroy them together with the project.',
          { projectId: id, deployments: live.items.map((d) => ({ id: d._id, name: d.name })), total: live.total },
        );
      }
      if (live.total > 0) await deps.authz.authorize(principal, 'deployment.manage', { projectId: id });
      for (let page = 0; live.total > 0 && page < FORCE_PAGES; page++) {
        for (const d of live.items) {
          await deps.deployments.destroy(principal, d._id).catch((err: unknown) => {
            // Destroyed meanwhile by someone else: what this delete wanted.
            if (!(err instanceof AppError && err.code === 'DEPLOYMENT_NOT_FOUND')) throw err;
          });
        }
        live = await liveDeployments(principal, id);
      }
      if (live.total > 0) {
        throw new AppError(
          'CONFLICT',
          `Project "${project.name}" gained deployments while it was being deleted; delete it again.`,
          { projectId: id },
        );
      }
      if (!(await store.remove(principal.org._id, id))) throw projectNotFound(id);
    },

    members: createMemberService({ store, users: deps.users, lock: deps.lock, get }),
  };
}

export type ProjectService = ReturnType<typeof createProjectService>;
