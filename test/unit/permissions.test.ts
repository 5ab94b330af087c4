import {
  isProjectOnly,
  isProjectPermission,
  ORG_ROLE_PERMISSIONS,
  ORG_ROLES,
  PERMISSIONS,
  permissionsMarkdown,
  PROJECT_ONLY_PERMISSIONS,
  PROJECT_PERMISSIONS,
  PROJECT_ROLE_PERMISSIONS,
  PROJECT_ROLES,
  projectRoleAllows,
  roleAllows,
} from '@shared/permissions';

describe('the permissions table', () => {
  it('gives owners and admins everything, and keeps the organisation-only permissions from everyone else', () => {
    for (const p of PERMISSIONS) {
      expect(roleAllows('owner', p)).toBe(true);
      expect(roleAllows('admin', p)).toBe(true);
    }
    for (const p of ['user.manage', 'audit.read', 'sales.manage', 'ai_provider.manage'] as const) {
      expect(roleAllows('developer', p)).toBe(false);
      expect(roleAllows('viewer', p)).toBe(false);
    }
  });

  it('lets a viewer read and manage its own tokens, and change nothing else', () => {
    expect(ORG_ROLE_PERMISSIONS.viewer).toEqual([
      'deployment.read',
      'deployment.logs',
      'project.read',
      'volume.read',
      'database.read',
      'bucket.read',
      'database_source.read',
      'ticket.read',
      'organization.read',
      'git.read',
      'domain.read',
      'usage.read',
      'token.manage',
    ]);
    // Viewers read tickets and settings; opening, commenting and changing settings are beyond them.
    expect(roleAllows('viewer', 'ticket.create')).toBe(false);
    expect(roleAllows('developer', 'ticket.create')).toBe(true);
    expect(roleAllows('developer', 'organization.manage')).toBe(false);
    expect(roleAllows('viewer', 'organization.manage')).toBe(false);
    // A binding ships releases on every push: making one is a developer's act, never a viewer's.
    expect(roleAllows('viewer', 'git.manage')).toBe(false);
    expect(roleAllows('developer', 'git.manage')).toBe(true);
    expect(projectRoleAllows('viewer', 'git.manage')).toBe(false);
    expect(projectRoleAllows('viewer', 'git.read')).toBe(true);
    expect(roleAllows('viewer', 'domain.manage')).toBe(false);
    expect(roleAllows('developer', 'domain.manage')).toBe(true);
    // Usage is the organisation's as a whole: anyone in it may read it.
    for (const role of ['owner', 'admin', 'developer', 'viewer'] as const)
      expect(roleAllows(role, 'usage.read')).toBe(true);
    expect(roleAllows('viewer', 'database.reveal')).toBe(false);
    // Reading a source's data is more than seeing that it exists.
    expect(roleAllows('viewer', 'database_source.query')).toBe(false);
    expect(roleAllows('developer', 'database_source.query')).toBe(true);
    expect(roleAllows('viewer', 'database.create')).toBe(false);
    expect(roleAllows('viewer', 'deployment.create')).toBe(false);
    expect(roleAllows('viewer', 'volume.create')).toBe(false);
    expect(roleAllows('viewer', 'volume.delete')).toBe(false);
    expect(roleAllows('viewer', 'secret.use')).toBe(false);
  });

  it('grants a developer every project-only permission, so one made admin of a project can run it', () => {
    for (const p of PROJECT_ONLY_PERMISSIONS) {
      expect(roleAllows('developer', p)).toBe(true);
      expect(isProjectOnly(p)).toBe(true);
      expect(isProjectPermission(p)).toBe(true);
    }
    expect(isProjectOnly('deployment.create')).toBe(false);
    expect(isProjectOnly('project.create')).toBe(false);
  });

  it('lets project roles decide project permissions only, each role a subset of the one above it', () => {
    expect(isProjectPermission('project.create')).toBe(false);
    expect(isProjectPermission('token.manage')).toBe(false);
    for (const role of PROJECT_ROLES) {
      for (const p of PROJECT_ROLE_PERMISSIONS[role]) expect(PROJECT_PERMISSIONS).toContain(p);
      expect(projectRoleAllows(role, 'project.create')).toBe(false);
    }
    expect(PROJECT_ROLE_PERMISSIONS.admin).toEqual(PROJECT_PERMISSIONS);
    for (const p of PROJECT_ROLE_PERMISSIONS.viewer) expect(projectRoleAllows('developer', p)).toBe(true);
    for (const p of PROJECT_ROLE_PERMISSIONS.developer) expect(projectRoleAllows('admin', p)).toBe(true);
    expect(projectRoleAllows('developer', 'project.members.manage')).toBe(false);
    expect(projectRoleAllows('viewer', 'deployment.create')).toBe(false);
  });

  it('describes itself as a Markdown table with one row per permission, generated from the checks', () => {
    const lines = permissionsMarkdown().split('\n');
    const cells = (line: string) =>
      line
        .split('|')
        .slice(1, -1)
        .map((c) => c.trim());
    expect(lines).toHaveLength(2 + PERMISSIONS.length);
    expect(cells(lines[0]!)).toEqual([
      'permission',
      ...ORG_ROLES.map((r) => `org ${r}`),
      ...PROJECT_ROLES.map((r) => `project ${r}`),
    ]);
    const row = (p: string) => cells(lines.find((l) => l.startsWith(`| \`${p}\` |`))!);
    // org owner, admin, developer, viewer | project admin, developer, viewer
    expect(row('project.update')).toEqual(['`project.update`', '✓', '✓', 'in projects', '–', '✓', '–', '–']);
    expect(row('deployment.create')).toEqual(['`deployment.create`', '✓', '✓', '✓', '–', '✓', '✓', '–']);
    expect(row('token.manage')).toEqual(['`token.manage`', '✓', '✓', '✓', '✓', 'n/a', 'n/a', 'n/a']);
    for (const line of lines) expect(cells(line)).toHaveLength(1 + ORG_ROLES.length + PROJECT_ROLES.length);
  });
});

describe('database.reveal, a permission apart', () => {
  it('is held by org owners and admins, and below them only inside a project, by its admins', () => {
    expect(roleAllows('owner', 'database.reveal')).toBe(true);
    expect(roleAllows('admin', 'database.reveal')).toBe(true);
    expect(isProjectOnly('database.reveal')).toBe(true);
    expect(projectRoleAllows('admin', 'database.reveal')).toBe(true);
    expect(projectRoleAllows('developer', 'database.reveal')).toBe(false);
    expect(projectRoleAllows('viewer', 'database.reveal')).toBe(false);
    // Creating, backing up or restoring a database gives no read of its credentials.
    expect(projectRoleAllows('developer', 'database.restore')).toBe(true);
  });
});
