/** Scopes and permissions share one vocabulary (DESIGN.md §5): a request needs the permission in both. */
export const PERMISSIONS = [
  'deployment.read',
  'deployment.create',
  'deployment.manage',
  'deployment.logs',
  'project.read',
  'project.create',
  'project.update',
  'project.delete',
  'project.members.manage',
  'token.manage',
  'sales.manage',
  'secret.manage',
  /** Send a vault secret where a deploy names (a Git token to repoUrl's host): more than deployment.create. */
  'secret.use',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const ORG_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

const READ: Permission[] = ['deployment.read', 'deployment.logs', 'project.read'];
const WRITE: Permission[] = [
  ...READ,
  'deployment.create',
  'deployment.manage',
  'project.create',
  'project.update',
  'token.manage',
  'secret.manage',
  'secret.use',
];

export const ROLE_PERMISSIONS: Record<OrgRole, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  developer: WRITE,
  // A viewer may hold a token naming any scope; the role still refuses what it cannot do.
  viewer: [...READ, 'token.manage'],
};

export function roleAllows(role: OrgRole, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(permission);
}
