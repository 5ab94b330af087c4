/**
 * Scopes and permissions share one vocabulary (docs/architecture.md, "Identity and permissions"): a request needs the
 * permission in the token's scopes AND in the user's org role AND, for a resource inside a project, in the user's
 * project role. This file is the one table of who may do what; authorize (shared/authz) enforces it and the OpenAPI
 * description is generated from it.
 */
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
  /** Add users to the organisation and change their org role. */
  'user.manage',
  /** Read the organisation's audit trail. */
  'audit.read',
  /** Add, change, test and remove the organisation's AI providers (their keys are org secrets): owners and admins. */
  'ai_provider.manage',
  /** See the organisation's persistent volumes (and those of projects one may see). */
  'volume.read',
  /** Create a volume; inside a project, by the project role. */
  'volume.create',
  /** Delete a volume and the data on it. */
  'volume.delete',
  /** See databases (a deployment's and managed ones), their backups, snapshots and schedules; never credentials. */
  'database.read',
  /** Create a database, link a managed one to a deployment. */
  'database.create',
  /** Delete a database (and its backups), unlink one, delete a snapshot. */
  'database.delete',
  /** Take backups and snapshots, set and remove backup schedules. */
  'database.backup',
  /** Restore a backup or snapshot: to a new database, or in place over the data a database holds. */
  'database.restore',
  /** See buckets, what they hold, their keys (never a secret) and links. */
  'bucket.read',
  /** Create a bucket, link one to a deployment. */
  'bucket.create',
  /** Delete a bucket and every object in it, unlink one. */
  'bucket.delete',
  /** Make and revoke a bucket's keys: a key's secret opens the bucket's data, so apart from bucket.create. */
  'bucket.credentials',
  /** Read a database's credentials: apart from every other permission, and audited every time. */
  'database.reveal',
  /** See database sources, their schema and the questions asked of them; never a password. */
  'database_source.read',
  /** Add, change, test and remove database sources. */
  'database_source.manage',
  /** Run read-only statements on a source and ask it questions: the source's data, read through the safety check. */
  'database_source.query',
  /** See the organisation's support tickets, their comments and status history. */
  'ticket.read',
  /** Open a support ticket, comment on one, change its status (closing: owners, admins and its author). */
  'ticket.create',
  /** See the organisation's settings (name, defaults, limits, the seller settings without a secret). */
  'organization.read',
  /** Change the organisation's settings. */
  'organization.manage',
  /** See Git connections, bindings and their deliveries (never a token or a webhook secret). */
  'git.read',
  /** Add and remove Git connections and bindings: a binding ships releases of its deployment on every push. */
  'git.manage',
  /** See custom domains, the DNS records they need and what their last check found. */
  'domain.read',
  /** Add, verify and remove custom domains (a verified one is served on the edge router). */
  'domain.manage',
  /** See the organisation's usage over a period (CPU, memory, builds, requests, storage, AI tokens). */
  'usage.read',
] as const;

export type Permission = (typeof PERMISSIONS)[number];

export const ORG_ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;
export type OrgRole = (typeof ORG_ROLES)[number];

export const PROJECT_ROLES = ['admin', 'developer', 'viewer'] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

/**
 * The permissions a project role can decide: checked against the project role whenever the resource lives in a
 * project. Everything else (project.create, tokens, secrets, sales, users, audit) is the organisation's alone.
 */
export const PROJECT_PERMISSIONS = [
  'deployment.read',
  'deployment.create',
  'deployment.manage',
  'deployment.logs',
  'project.read',
  'project.update',
  'project.delete',
  'project.members.manage',
  'volume.read',
  'volume.create',
  'volume.delete',
  'database.read',
  'database.create',
  'database.delete',
  'database.backup',
  'database.restore',
  'database.reveal',
  'bucket.read',
  'bucket.create',
  'bucket.delete',
  'bucket.credentials',
  'database_source.read',
  'database_source.manage',
  'database_source.query',
  'git.read',
  'git.manage',
  'domain.read',
  'domain.manage',
] as const satisfies readonly Permission[];

export type ProjectPermission = (typeof PROJECT_PERMISSIONS)[number];

/**
 * Project permissions that name nothing outside a project: below org admin they are only ever granted inside a
 * project, by the project role. A route that forgets to say which project it touches is refused, not opened.
 */
export const PROJECT_ONLY_PERMISSIONS = [
  'project.update',
  'project.delete',
  'project.members.manage',
  'database.reveal',
] as const satisfies readonly ProjectPermission[];

const READ: Permission[] = [
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
];

/**
 * Org role → permissions. For a resource inside a project the org role is a ceiling and the project role decides
 * (owners and admins excepted): a developer holds project.update, project.delete and project.members.manage here so
 * that one made admin of a project can run it, and can use them only there (PROJECT_ONLY_PERMISSIONS).
 */
export const ORG_ROLE_PERMISSIONS: Record<OrgRole, readonly Permission[]> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  developer: [
    ...READ,
    'deployment.create',
    'deployment.manage',
    'project.create',
    'project.update',
    'project.delete',
    'project.members.manage',
    'token.manage',
    'secret.manage',
    'secret.use',
    'volume.create',
    'volume.delete',
    'database.create',
    'database.delete',
    'database.backup',
    'database.restore',
    // database.reveal too, so that one made admin of a project can read its credentials there (and only there:
    // below org admin it is granted inside a project, by the project role, which gives it to project admins alone).
    'database.reveal',
    'bucket.create',
    'bucket.delete',
    'bucket.credentials',
    'database_source.manage',
    'database_source.query',
    'ticket.create',
    'git.manage',
    'domain.manage',
  ],
  // A viewer may hold a token naming any scope; the role still refuses what it cannot do.
  viewer: [...READ, 'token.manage'],
};

/** Project role → permissions inside that project. Org owners and admins act as project admins everywhere. */
export const PROJECT_ROLE_PERMISSIONS: Record<ProjectRole, readonly ProjectPermission[]> = {
  admin: PROJECT_PERMISSIONS,
  developer: [
    'deployment.read',
    'deployment.logs',
    'deployment.create',
    'deployment.manage',
    'project.read',
    'volume.read',
    'volume.create',
    'volume.delete',
    'database.read',
    'database.create',
    'database.delete',
    'database.backup',
    'database.restore',
    'bucket.read',
    'bucket.create',
    'bucket.delete',
    'bucket.credentials',
    'database_source.read',
    'database_source.manage',
    'database_source.query',
    'git.read',
    'git.manage',
    'domain.read',
    'domain.manage',
  ],
  viewer: [
    'deployment.read',
    'deployment.logs',
    'project.read',
    'volume.read',
    'database.read',
    'bucket.read',
    'database_source.read',
    'git.read',
    'domain.read',
  ],
};

/** The org roles that act as admin of every project of their organisation. */
export const PROJECT_ADMIN_ORG_ROLES: readonly OrgRole[] = ['owner', 'admin'];

export function roleAllows(role: OrgRole, permission: Permission): boolean {
  return ORG_ROLE_PERMISSIONS[role].includes(permission);
}

export const isProjectOnly = (p: Permission): boolean =>
  (PROJECT_ONLY_PERMISSIONS as readonly Permission[]).includes(p);

export const isProjectPermission = (p: Permission): p is ProjectPermission =>
  (PROJECT_PERMISSIONS as readonly Permission[]).includes(p);

export function projectRoleAllows(role: ProjectRole, permission: Permission): boolean {
  return (PROJECT_ROLE_PERMISSIONS[role] as readonly Permission[]).includes(permission);
}

/** The table as Markdown, for the OpenAPI description: generated, so the document cannot drift from the checks. */
export function permissionsMarkdown(): string {
  const mark = (yes: boolean) => (yes ? '✓' : '–');
  const header = `| permission | ${ORG_ROLES.map((r) => `org ${r}`).join(' | ')} | ${PROJECT_ROLES.map((r) => `project ${r}`).join(' | ')} |`;
  const rule = `|${' --- |'.repeat(1 + ORG_ROLES.length + PROJECT_ROLES.length)}`;
  const rows = PERMISSIONS.map((p) => {
    const org = ORG_ROLES.map((r) =>
      roleAllows(r, p) && isProjectOnly(p) && !PROJECT_ADMIN_ORG_ROLES.includes(r)
        ? 'in projects'
        : mark(roleAllows(r, p)),
    );
    const project = PROJECT_ROLES.map((r) => (isProjectPermission(p) ? mark(projectRoleAllows(r, p)) : 'n/a'));
    return `| \`${p}\` | ${[...org, ...project].join(' | ')} |`;
  });
  return [header, rule, ...rows].join('\n');
}
