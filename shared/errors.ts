/** The compatibility API's codes (spec, "Errors"); every origin renders an AppError from this one vocabulary. */
export const ERROR_CODES = [
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

export type ErrorCode = (typeof ERROR_CODES)[number];

export const HTTP_STATUS: Record<ErrorCode, number> = {
  INVALID_TOKEN: 401,
  TOKEN_EXPIRED: 401,
  INSUFFICIENT_SCOPE: 403,
  RATE_LIMIT_EXCEEDED: 429,
  DEPLOYMENT_NOT_FOUND: 404,
  PROJECT_NOT_FOUND: 404,
  INVALID_REQUEST: 400,
  DEPLOYMENT_FAILED: 400,
  DUPLICATE_REQUEST: 409,
  QUOTA_EXCEEDED: 429,
  PROVIDER_NOT_ALLOWED: 403,
  INTERNAL_ERROR: 500,
};

/** A failure a caller can act on. Services throw these; one renderer per origin turns them into a body. */
export class AppError extends Error {
  override name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    /** Only for the rare status the code table does not decide (an unknown route is a 404 INVALID_REQUEST). */
    private readonly statusOverride?: number,
  ) {
    super(message);
  }
  get status(): number {
    return this.statusOverride ?? HTTP_STATUS[this.code];
  }
}

/** A MongoDB failure; rendered as a generic 500 so driver messages never reach a client. */
export class DatabaseError extends Error {
  override name = 'DatabaseError';
  constructor(operation: string, cause: unknown) {
    super(`database operation failed: ${operation}`, { cause });
  }
}
