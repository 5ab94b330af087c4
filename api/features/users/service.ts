import { isDuplicateKey } from '@shared/db/mongo';
import { AppError } from '@shared/errors';
import type { IdentityService, Principal } from '@shared/identity/service';
import type { UserRecord } from '@shared/identity/store';
import type { KeyedLock } from '@shared/locks';
import type { OrgRole } from '@shared/permissions';

export interface UserServiceDeps {
  identity: Pick<IdentityService, 'addUser' | 'listUsers' | 'setUserRole'>;
  lock: KeyedLock;
}

const userNotFound = (id: string) =>
  new AppError('USER_NOT_FOUND', `No user ${id} in this organisation.`, { userId: id });

/** Only an owner hands out or takes away ownership: an admin cannot make themselves, or anyone, an owner. */
function checkOwnership(principal: Principal, roles: OrgRole[]) {
  if (principal.user.role === 'owner' || !roles.includes('owner')) return;
  throw new AppError(
    'INSUFFICIENT_SCOPE',
    `Only an owner can grant or change the owner role; your role is ${principal.user.role}. Ask an owner.`,
    { required: 'owner' },
  );
}

/**
 * The organisation's users (org roles owner, admin, developer, viewer), through the platform as the CLI does: both
 * add users with identity.addUser. An organisation keeps an owner: a demotion of the last one is refused, under the
 * org's lock in Redis, since "count the owners, then write" is not atomic in FerretDB.
 */
export function createUserService(deps: UserServiceDeps) {
  const { identity } = deps;
  return {
    list: (principal: Principal) => identity.listUsers(principal.org._id),

    async add(principal: Principal, input: { email: string; name?: string; role: OrgRole }): Promise<UserRecord> {
      checkOwnership(principal, [input.role]);
      try {
        return await identity.addUser({ orgId: principal.org._id, ...input });
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
        throw new AppError(
          'CONFLICT',
          `A user with e-mail ${input.email.toLowerCase()} already exists in this organisation; change their role with PATCH /platform/users/{id}.`,
          { email: input.email.toLowerCase() },
        );
      }
    },

    async setRole(principal: Principal, userId: string, role: OrgRole): Promise<UserRecord> {
      const orgId = principal.org._id;
      return deps.lock(`org-owners:${orgId}`, 'the roles of this organisation', async () => {
        const users = await identity.listUsers(orgId);
        const user = users.find((u) => u._id === userId);
        if (!user) throw userNotFound(userId);
        checkOwnership(principal, [user.role, role]);
        if (user.role === 'owner' && role !== 'owner' && users.filter((u) => u.role === 'owner').length === 1) {
          throw new AppError(
            'INVALID_REQUEST',
            `User ${userId} is the last owner of the organisation and cannot be demoted; make another user owner first.`,
            { userId },
          );
        }
        if (!(await identity.setUserRole(orgId, userId, role))) throw userNotFound(userId);
        return { ...user, role };
      });
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
