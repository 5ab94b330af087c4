import type { Session } from '@shared/builder/types';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { PROJECT_ADMIN_ORG_ROLES } from '@shared/permissions';
import type { ProjectStore } from '@shared/projects/store';

export type Need = 'read' | 'write';

export const sessionNotFound = (id: string) =>
  new AppError('SESSION_NOT_FOUND', `No builder session ${id} in this organisation.`, { id });

/**
 * Who may use the builder (the interface: "builder operations require only authentication and role-based access control,
 * with no named permission"): org owners and admins in every project; below them, the project role — viewers read,
 * developers and admins change — and an org viewer never changes anything. A project the caller is not a member of
 * reads as the resource's own not-found, never a 403.
 */
export function createBuilderAccess(deps: { projects: Pick<ProjectStore, 'get' | 'memberRole'> }) {
  async function check(p: Principal, projectId: string, need: Need, notFound: () => AppError): Promise<void> {
    if (PROJECT_ADMIN_ORG_ROLES.includes(p.user.role)) return;
    const role = await deps.projects.memberRole(p.org._id, projectId, p.user._id);
    if (!role) throw notFound();
    if (need === 'write' && (role === 'viewer' || p.user.role === 'viewer'))
      throw new AppError(
        'INSUFFICIENT_SCOPE',
        `Your role ${role === 'viewer' ? 'viewer in this project' : 'viewer in this organisation'} lets you read builder sessions, not change them; ask a project admin.`,
        { projectId, projectRole: role, orgRole: p.user.role },
      );
  }

  return {
    /** A project the caller may use (it must exist in the caller's org). */
    async project(p: Principal, projectId: string, need: Need): Promise<void> {
      const notFound = () =>
        new AppError('PROJECT_NOT_FOUND', `No project ${projectId} in this organisation.`, { projectId });
      if (!(await deps.projects.get(p.org._id, projectId))) throw notFound();
      await check(p, projectId, need, notFound);
    },

    /** A session of the caller's org in a project the caller may use, or SESSION_NOT_FOUND. */
    async session(p: Principal, session: Session | undefined, id: string, need: Need): Promise<Session> {
      if (!session) throw sessionNotFound(id);
      await check(p, session.projectId, need, () => sessionNotFound(id));
      return session;
    },
  };
}

export type BuilderAccess = ReturnType<typeof createBuilderAccess>;
