import { isDuplicateKey } from '@shared/db/mongo';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { UserRecord } from '@shared/identity/store';
import type { KeyedLock } from '@shared/locks';
import type { ProjectStore } from '@shared/projects/store';
import type { MemberRecord, ProjectRecord, ProjectRole } from '@shared/projects/types';

export interface MemberServiceDeps {
  store: ProjectStore;
  /** The organisation's users: a member must be one of them. */
  users: { listUsers(orgId: string, ids?: string[]): Promise<UserRecord[]> };
  lock: KeyedLock;
  /** The caller's organisation's project, or PROJECT_NOT_FOUND. */
  get(principal: Principal, projectId: string): Promise<ProjectRecord>;
}

const memberNotFound = (projectId: string, userId: string) =>
  new AppError('MEMBER_NOT_FOUND', `User ${userId} is not a member of project ${projectId}.`, { projectId, userId });

/** A member with the user's e-mail, for a list people read. */
export type MemberWithUser = Omit<MemberRecord, '_id'> & { email?: string; name?: string };

/**
 * Project members (their fields are part of the interface: docs/architecture.md, "The interface we keep"). A project keeps at least one admin: that rule is a count then a write,
 * which FerretDB cannot make atomic, so every change that can lower the count (a demotion, a removal) runs under
 * the project's lock in Redis — two concurrent demotions of the last two admins run one after the other, and the
 * second sees one admin left.
 */
export function createMemberService(deps: MemberServiceDeps) {
  const { store } = deps;
  const underLock = <T>(projectId: string, fn: () => Promise<T>) =>
    deps.lock(`project-members:${projectId}`, `the members of project ${projectId}`, fn);

  async function member(principal: Principal, projectId: string, userId: string): Promise<MemberRecord> {
    const m = await store.getMember(principal.org._id, projectId, userId);
    if (!m) throw memberNotFound(projectId, userId);
    return m;
  }

  /** Refuses a change that would leave the project with no admin; says what to do instead. */
  async function keepAnAdmin(principal: Principal, m: MemberRecord, change: 'demote' | 'remove') {
    if (m.role !== 'admin') return;
    const admins = (await store.listMembers(principal.org._id, m.projectId)).filter((x) => x.role === 'admin');
    if (admins.length > 1) return;
    throw new AppError(
      'INVALID_REQUEST',
      `User ${m.userId} is the last admin of project ${m.projectId} and cannot be ${change === 'demote' ? 'demoted' : 'removed'}; ` +
        'make another member admin first (PATCH /platform/projects/{id}/members/{userId} {"role":"admin"}), or delete the project.',
      { projectId: m.projectId, userId: m.userId },
    );
  }

  return {
    async list(principal: Principal, projectId: string): Promise<MemberWithUser[]> {
      await deps.get(principal, projectId);
      const members = await store.listMembers(principal.org._id, projectId);
      const users = new Map(
        (
          await deps.users.listUsers(
            principal.org._id,
            members.map((m) => m.userId),
          )
        ).map((u) => [u._id, u]),
      );
      return members.map((m) => {
        const u = users.get(m.userId);
        return { ...m, ...(u ? { email: u.email, ...(u.name ? { name: u.name } : {}) } : {}) };
      });
    },

    /** The user must be of the organisation (another org's user reads as unknown); a second add is a conflict. */
    async add(principal: Principal, projectId: string, input: { userId: string; role: ProjectRole }) {
      await deps.get(principal, projectId);
      const [user] = await deps.users.listUsers(principal.org._id, [input.userId]);
      if (!user) {
        throw new AppError(
          'USER_NOT_FOUND',
          `No user ${input.userId} in this organisation; add them with POST /platform/users first.`,
          {
            userId: input.userId,
          },
        );
      }
      const record = {
        projectId,
        orgId: principal.org._id,
        userId: input.userId,
        role: input.role,
        addedAt: new Date(),
        addedBy: principal.user._id,
      };
      try {
        await store.addMember(record);
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        throw new AppError(
          'CONFLICT',
          `User ${input.userId} is already a member of project ${projectId}; change their role with PATCH instead.`,
          { projectId, userId: input.userId },
        );
      }
      return { ...record, email: user.email, ...(user.name ? { name: user.name } : {}) };
    },

    async setRole(principal: Principal, projectId: string, userId: string, role: ProjectRole) {
      await deps.get(principal, projectId);
      return underLock(projectId, async () => {
        const m = await member(principal, projectId, userId);
        if (role !== 'admin') await keepAnAdmin(principal, m, 'demote');
        if (!(await store.setRole(principal.org._id, projectId, userId, role))) throw memberNotFound(projectId, userId);
        return { ...m, role };
      });
    },

    async remove(principal: Principal, projectId: string, userId: string): Promise<void> {
      await deps.get(principal, projectId);
      await underLock(projectId, async () => {
        const m = await member(principal, projectId, userId);
        await keepAnAdmin(principal, m, 'remove');
        if (!(await store.removeMember(principal.org._id, projectId, userId))) throw memberNotFound(projectId, userId);
      });
    },
  };
}
