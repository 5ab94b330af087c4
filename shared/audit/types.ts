/** Who did it: a caller's access token (the only credential today), or the service itself (workflows, schedules). */
export const ACTOR_TYPES = ['user', 'token', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** success: 2xx/3xx; denied: refused for access (403, or 404 on something the caller cannot reach); failure: else. */
export const OUTCOMES = ['success', 'failure', 'denied'] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** hooks: a Git host's webhook delivery, acting as the binding that verified it (actor type system). */
export const AUDIT_ORIGINS = ['compat', 'platform', 'mcp', 'hooks'] as const;
export type AuditOrigin = (typeof AUDIT_ORIGINS)[number];

/**
 * One change, or one attempt at one, in an organisation (docs/architecture.md, "Audit"). Immutable once written: the
 * store has no update or delete. It holds no request or response body, so no secret a caller sent or received can land
 * here.
 */
export interface AuditEvent {
  _id: string;
  at: Date;
  orgId: string;
  projectId?: string;
  actor: { type: ActorType; userId?: string; tokenId?: string };
  /** `<resource>.<verb>`, e.g. project.update, deployment.create, member.delete. */
  action: string;
  resource: { type: string; id?: string };
  /**
   * What a change did, field by field, where the route says (organisation settings, a ticket's status): the values of
   * settings that are never secret. An empty list records an attempt that changed nothing.
   */
  changes?: AuditChange[];
  outcome: Outcome;
  /** The HTTP status answered (MCP: the status the same operation answers over REST). */
  status: number;
  origin: AuditOrigin;
  ip?: string;
  userAgent?: string;
  requestId: string;
}

/** One field of a change: its value before and after (JSON values; never a secret). */
export interface AuditChange {
  field: string;
  from: unknown;
  to: unknown;
}

export interface AuditQuery {
  orgId: string;
  /** A user ID or a token ID. */
  actor?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  projectId?: string;
  outcome?: Outcome;
  since?: Date;
  until?: Date;
  /** Events strictly older than this position (newest first). */
  after?: { at: Date; id: string };
  limit: number;
}
