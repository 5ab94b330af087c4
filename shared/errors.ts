/** The compatibility API's codes (spec, "Errors"): the only codes a compat error body ever carries. */
export const COMPAT_CODES = [
  'INVALID_TOKEN',
  'TOKEN_EXPIRED',
  'INSUFFICIENT_SCOPE',
  'RATE_LIMIT_EXCEEDED',
  'DEPLOYMENT_NOT_FOUND',
  'PROJECT_NOT_FOUND',
  'INVALID_REQUEST',
  'DEPLOYMENT_FAILED',
  'DUPLICATE_REQUEST',
  'QUOTA_EXCEEDED',
  'PROVIDER_NOT_ALLOWED',
  'INTERNAL_ERROR',
] as const;
export type CompatCode = (typeof COMPAT_CODES)[number];

/**
 * Every code any origin renders, with its HTTP status and the compat code a compat body shows for it: one table,
 * so no handler or service ever picks a status. Codes beyond the compat interface's (a resource of the platform not found, a
 * conflict, a method a path does not take) read as the nearest of its codes on the compatibility API.
 */
const CODES = {
  INVALID_TOKEN: { status: 401, compat: 'INVALID_TOKEN' },
  TOKEN_EXPIRED: { status: 401, compat: 'TOKEN_EXPIRED' },
  INSUFFICIENT_SCOPE: { status: 403, compat: 'INSUFFICIENT_SCOPE' },
  RATE_LIMIT_EXCEEDED: { status: 429, compat: 'RATE_LIMIT_EXCEEDED' },
  DEPLOYMENT_NOT_FOUND: { status: 404, compat: 'DEPLOYMENT_NOT_FOUND' },
  PROJECT_NOT_FOUND: { status: 404, compat: 'PROJECT_NOT_FOUND' },
  INVALID_REQUEST: { status: 400, compat: 'INVALID_REQUEST' },
  DEPLOYMENT_FAILED: { status: 400, compat: 'DEPLOYMENT_FAILED' },
  DUPLICATE_REQUEST: { status: 409, compat: 'DUPLICATE_REQUEST' },
  QUOTA_EXCEEDED: { status: 429, compat: 'QUOTA_EXCEEDED' },
  PROVIDER_NOT_ALLOWED: { status: 403, compat: 'PROVIDER_NOT_ALLOWED' },
  INTERNAL_ERROR: { status: 500, compat: 'INTERNAL_ERROR' },
  /** No such route on this origin. */
  ROUTE_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** The path exists but not with this method (the answer carries Allow). */
  METHOD_NOT_ALLOWED: { status: 405, compat: 'INVALID_REQUEST' },
  /** The request contradicts the resource's current state: a duplicate name, a member already added, a stale head. */
  CONFLICT: { status: 409, compat: 'INVALID_REQUEST' },
  UPLOAD_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  TOKEN_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  SECRET_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  USER_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  MEMBER_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  RELEASE_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A deployment command ID its workflow does not know (or knew in a run it has since continued from). */
  COMMAND_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  PRODUCT_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  SALE_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  SUBSCRIPTION_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  EVENT_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  AI_PROVIDER_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  VOLUME_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A volume mounted by a deployment: it is detached before it can be deleted. */
  VOLUME_ATTACHED: { status: 409, compat: 'INVALID_REQUEST' },
  DATABASE_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A backup or snapshot that is not this database's (or not the organisation's). */
  BACKUP_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A database that serves no such deployment. */
  LINK_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A database with no backup schedule. */
  SCHEDULE_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  BUCKET_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A bucket that holds objects: emptied only when the delete says force=true. */
  BUCKET_NOT_EMPTY: { status: 409, compat: 'INVALID_REQUEST' },
  /** An access key that is not this bucket's. */
  CREDENTIAL_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  CLOUD_CREDENTIALS_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** The cloud's read-only call refused the credentials a PUT gave: nothing was saved. */
  CLOUD_CREDENTIALS_REFUSED: { status: 400, compat: 'INVALID_REQUEST' },
  /** The cloud's API did not answer the check (network, outage): nothing was saved; try again. */
  CLOUD_UNREACHABLE: { status: 502, compat: 'INTERNAL_ERROR' },
  /** The object store cannot make keys scoped to one bucket (not MinIO, or its admin client is not configured). */
  SCOPED_KEYS_UNAVAILABLE: { status: 501, compat: 'INVALID_REQUEST' },
  DATABASE_SOURCE_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A question the source's history does not hold. */
  QUESTION_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A statement the safety check refused: nothing reached the database. */
  STATEMENT_BLOCKED: { status: 400, compat: 'INVALID_REQUEST' },
  /** The source's database refused the statement or cancelled it at its time limit; its own message says why. */
  QUERY_FAILED: { status: 400, compat: 'INVALID_REQUEST' },
  /** The source could not be reached or refused the login, as configured: its settings are the caller's to fix. */
  SOURCE_UNREACHABLE: { status: 400, compat: 'INVALID_REQUEST' },
  TICKET_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  SESSION_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  SHARE_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  CHECKPOINT_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A path the session's head has no file at. */
  FILE_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  TURN_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A sandbox sync ID the session's sandbox workflow does not know (never started, or from a run it continued). */
  SYNC_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  GIT_CONNECTION_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  GIT_BINDING_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A Git connection that bindings still use: they are deleted first. */
  GIT_CONNECTION_IN_USE: { status: 409, compat: 'INVALID_REQUEST' },
  /** A webhook delivery with no signature, or one the binding's secret does not verify. */
  SIGNATURE_INVALID: { status: 401, compat: 'INVALID_TOKEN' },
  /** A request body past the origin's size limit. */
  PAYLOAD_TOO_LARGE: { status: 413, compat: 'INVALID_REQUEST' },
  DOMAIN_NOT_FOUND: { status: 404, compat: 'INVALID_REQUEST' },
  /** A host another organisation has verified: it cannot be claimed or verified here. */
  HOSTNAME_TAKEN: { status: 409, compat: 'INVALID_REQUEST' },
  /** A change sent with a console session's cookie but without its CSRF token (X-CSRF-Token). */
  CSRF_REFUSED: { status: 403, compat: 'INSUFFICIENT_SCOPE' },
} as const satisfies Record<string, { status: number; compat: CompatCode }>;

export type ErrorCode = keyof typeof CODES;
export const ERROR_CODES = Object.keys(CODES) as ErrorCode[];

/** The status of every code, for the OpenAPI document and the MCP error results. */
export const statusOf = (code: ErrorCode): number => CODES[code].status;
export const compatCodeOf = (code: ErrorCode): CompatCode => CODES[code].compat;

/** A failure a caller can act on. Services throw these; one renderer per origin turns them into a body. */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
  get status(): number {
    return CODES[this.code].status;
  }
}

/** A MongoDB failure; rendered as a generic 500 so driver messages never reach a client. */
export class DatabaseError extends Error {
  override name = 'DatabaseError';
  constructor(operation: string, cause: unknown) {
    super(`database operation failed: ${operation}`, { cause });
  }
}
