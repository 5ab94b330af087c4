import type { SecretEnvironment } from '../secrets/store';

/**
 * A member's role inside one project (docs/architecture.md, "Identity and permissions"); org owners and admins act as
 * project admins everywhere.
 */
export const PROJECT_ROLES = ['admin', 'developer', 'viewer'] as const;
export type ProjectRole = (typeof PROJECT_ROLES)[number];

/** A project of an organisation; its name is unique within the org (a unique index, not a read-then-write). */
export interface ProjectRecord {
  _id: string;
  orgId: string;
  name: string;
  description?: string;
  framework?: string;
  repoUrl?: string;
  gitBranch?: string;
  /** A vault secret of the org bound to repoUrl's host (checked when set, and again by the worker when used). */
  gitTokenSecretId?: string;
  vaultEnvironment?: SecretEnvironment;
  createdAt: Date;
  updatedAt: Date;
  createdBy: string;
}

/** The fields a caller may set; `undefined` leaves a field as it is, `null` (on update) removes it. */
export type ProjectFields = Pick<
  ProjectRecord,
  'name' | 'description' | 'framework' | 'repoUrl' | 'gitBranch' | 'gitTokenSecretId' | 'vaultEnvironment'
>;

/**
 * One user's membership of one project: its own document (unique per project and user), so adding a member is an
 * insert a duplicate cannot slip past, and no project document is ever rewritten to change its members.
 */
export interface MemberRecord {
  /** `${projectId}:${userId}`: the same key as the unique index, so a retried insert is the same document. */
  _id: string;
  projectId: string;
  orgId: string;
  userId: string;
  role: ProjectRole;
  addedAt: Date;
  addedBy: string;
}

export const memberId = (projectId: string, userId: string) => `${projectId}:${userId}`;
