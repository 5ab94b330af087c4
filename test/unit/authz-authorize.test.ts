import { createAuthz, type Memberships } from '@shared/authz/authorize';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { type OrgRole, type Permission, PERMISSIONS, type ProjectRole } from '@shared/permissions';

/** Memberships as the projects store answers them: a table of (project, user) → role, nothing more. */
function memberships(table: Record<string, ProjectRole>): Memberships {
  return {
    memberRole: async (_orgId, projectId, userId) => table[`${projectId}/${userId}`],
    projectIdsOf: async (_orgId, userId) =>
      Object.keys(table)
        .filter((k) => k.endsWith(`/${userId}`))
        .map((k) => k.split('/')[0]!),
  };
}

function principal(role: OrgRole, scopes: readonly Permission[] = PERMISSIONS): Principal {
  const now = new Date();
  return {
    org: { _id: 'org1', name: 'Org', plan: 'free', createdAt: now },
    user: { _id: 'u1', orgId: 'org1', email: 'u1@example.test', role, createdAt: now },
    token: { _id: 't1', name: 'test', scopes: [...scopes], expiresAt: new Date(now.getTime() + 60_000) },
  };
}

/** The AppError `promise` rejects with, or the test fails. */
async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('authorize', () => {
  const { authorize, visibility, sees } = createAuthz({
    members: memberships({ 'p1/u1': 'viewer', 'p2/u1': 'admin' }),
  });

  it('refuses a token without the scope, even an owner’s, naming the scope', async () => {
    const err = await refusal(authorize(principal('owner', ['deployment.read']), 'deployment.create'));
    expect(err.code).toBe('INSUFFICIENT_SCOPE');
    expect(err.message).toBe('This token lacks the scope deployment.create; use a token that has it.');
    expect(err.details).toEqual({ required: 'deployment.create', missing: 'scope' });
  });

  it('refuses what the organisation role does not grant, whatever the token says', async () => {
    const err = await refusal(authorize(principal('viewer'), 'deployment.create'));
    expect(err.message).toBe('Your organisation role viewer does not grant deployment.create; ask an owner or admin.');
    expect(err.details).toEqual({ required: 'deployment.create', missing: 'orgRole', role: 'viewer' });
    // The org role is a ceiling: admin of project p2 does not lift it.
    await expect(authorize(principal('viewer'), 'deployment.create', { projectId: 'p2' })).rejects.toMatchObject({
      details: { missing: 'orgRole' },
    });
  });

  it('lets owners and admins act in every project, member or not', async () => {
    for (const role of ['owner', 'admin'] as const) {
      await expect(authorize(principal(role), 'project.delete', { projectId: 'p9' })).resolves.toBeUndefined();
      await expect(authorize(principal(role), 'project.update')).resolves.toBeUndefined();
    }
  });

  it('lets a developer use an organisation-level permission, but a project-only one only inside a project', async () => {
    await expect(authorize(principal('developer'), 'deployment.create')).resolves.toBeUndefined();
    const err = await refusal(authorize(principal('developer'), 'project.update'));
    expect(err.code).toBe('INSUFFICIENT_SCOPE');
    expect(err.details).toEqual({ required: 'project.update', missing: 'projectRole' });
    await expect(authorize(principal('developer'), 'project.update', { projectId: 'p2' })).resolves.toBeUndefined();
  });

  it('answers a project the caller is not a member of as not found, never as forbidden', async () => {
    const err = await refusal(authorize(principal('developer'), 'deployment.read', { projectId: 'p9' }));
    expect(err.code).toBe('PROJECT_NOT_FOUND');
    expect(err.status).toBe(404);
    expect(err.message).toBe('No project p9 in this organisation.');
    // A resource inside the project answers its own not-found.
    const own = new AppError('DEPLOYMENT_NOT_FOUND', 'No deployment d1.');
    await expect(
      authorize(principal('developer'), 'deployment.read', { projectId: 'p9', notFound: () => own }),
    ).rejects.toBe(own);
  });

  it('refuses what the project role does not grant, naming the role and the project', async () => {
    await expect(authorize(principal('developer'), 'deployment.read', { projectId: 'p1' })).resolves.toBeUndefined();
    const err = await refusal(authorize(principal('developer'), 'deployment.create', { projectId: 'p1' }));
    expect(err.message).toBe('Your role viewer in project p1 does not grant deployment.create; ask a project admin.');
    expect(err.details).toEqual({
      required: 'deployment.create',
      missing: 'projectRole',
      projectRole: 'viewer',
      projectId: 'p1',
    });
  });

  it('shows owners every project, others their own and the resources of no project', async () => {
    expect(await visibility(principal('admin'))).toEqual({ all: true });
    const v = await visibility(principal('developer'));
    expect(v).toEqual({ all: false, projectIds: ['p1', 'p2'] });
    expect(sees(v, 'p1')).toBe(true);
    expect(sees(v, 'p9')).toBe(false);
    expect(sees(v, undefined)).toBe(true);
    expect(sees({ all: true }, 'p9')).toBe(true);
  });
});
