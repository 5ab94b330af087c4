import { AppError } from '../errors';
import type { Principal } from '../identity/service';
import {
  isProjectOnly,
  type Permission,
  PROJECT_ADMIN_ORG_ROLES,
  type ProjectRole,
  projectRoleAllows,
  roleAllows,
} from '../permissions';

/** What authorize needs of the projects store: a user's role in a project, and the projects a user belongs to. */
export interface Memberships {
  memberRole(orgId: string, projectId: string, userId: string): Promise<ProjectRole | undefined>;
  projectIdsOf(orgId: string, userId: string): Promise<string[]>;
}

export interface AuthzScope {
  /** The project the resource lives in; absent for a resource of the organisation (or a deployment of no project). */
  projectId?: string;
  /** The refusal for a caller who may not see the project: the resource's own not-found (404), never a 403. */
  notFound?: () => AppError;
}

/** The projects whose resources a caller sees: every one (org owners and admins), or those it is a member of. */
export type Visibility = { all: true } | { all: false; projectIds: string[] };

/**
 * The one access decision of every route of every origin (and of MCP tools): the permission must be in the token's
 * scopes AND the org role AND, for a resource inside a project, the caller's project role — org owners and admins
 * act as admins of every project. A project the caller is not a member of is reported as not found, so a refusal
 * never tells a caller that something it cannot see exists; a 403 is only ever about what the caller can see.
 */
export function createAuthz({ members }: { members: Memberships }) {
  const orgAdmin = (p: Principal) => PROJECT_ADMIN_ORG_ROLES.includes(p.user.role);

  async function authorize(principal: Principal, permission: Permission, scope: AuthzScope = {}): Promise<void> {
    if (!principal.token.scopes.includes(permission)) {
      throw new AppError('INSUFFICIENT_SCOPE', `This token lacks the scope ${permission}; use a token that has it.`, {
        required: permission,
        missing: 'scope',
      });
    }
    const role = principal.user.role;
    if (!roleAllows(role, permission)) {
      throw new AppError(
        'INSUFFICIENT_SCOPE',
        `Your organisation role ${role} does not grant ${permission}; ask an owner or admin.`,
        { required: permission, missing: 'orgRole', role },
      );
    }
    if (orgAdmin(principal)) return;
    if (scope.projectId === undefined) {
      if (isProjectOnly(permission)) {
        throw new AppError(
          'INSUFFICIENT_SCOPE',
          `${permission} is granted inside a project by your role there; you are not an admin of the organisation.`,
          { required: permission, missing: 'projectRole' },
        );
      }
      return;
    }
    const projectRole = await members.memberRole(principal.org._id, scope.projectId, principal.user._id);
    if (!projectRole) {
      throw (
        scope.notFound?.() ??
        new AppError('PROJECT_NOT_FOUND', `No project ${scope.projectId} in this organisation.`, {
          projectId: scope.projectId,
        })
      );
    }
    if (!projectRoleAllows(projectRole, permission)) {
      throw new AppError(
        'INSUFFICIENT_SCOPE',
        `Your role ${projectRole} in project ${scope.projectId} does not grant ${permission}; ask a project admin.`,
        { required: permission, missing: 'projectRole', projectRole, projectId: scope.projectId },
      );
    }
  }

  return {
    authorize,

    /** For lists: which projects' resources the caller may see (resources of no project are the org's, seen by all). */
    async visibility(principal: Principal): Promise<Visibility> {
      if (orgAdmin(principal)) return { all: true };
      return { all: false, projectIds: await members.projectIdsOf(principal.org._id, principal.user._id) };
    },

    /** Whether a resource of `projectId` (undefined: of no project) is visible under `v`. */
    sees: (v: Visibility, projectId: string | undefined): boolean =>
      v.all || projectId === undefined || v.projectIds.includes(projectId),
  };
}

export type Authz = ReturnType<typeof createAuthz>;
