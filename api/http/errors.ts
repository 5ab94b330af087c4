import { randomUUID } from 'node:crypto';

import type { ErrorRequestHandler, Request } from 'express';

import { AppError, compatCodeOf } from '@shared/errors';
import type { Logger } from '@shared/logger';
import { currentRequestId } from '@shared/request-context';

/** Express's body parser (http-errors) reports malformed and refused bodies with these fields. */
interface HttpError {
  type?: string;
  status?: number;
}

/**
 * What the caller is told about a body the parser refused, by the parser's error type: our own words, never the
 * library's (its messages name charsets, encodings and stream states a caller cannot act on).
 */
const BODY_ERRORS: Record<string, string> = {
  'entity.parse.failed': 'The request body is not valid JSON.',
  'entity.too.large': 'The request body is too large (at most 1 MB of JSON).',
  'charset.unsupported': 'The request body’s charset is not supported: send JSON in UTF-8.',
  'encoding.unsupported': 'The request body’s Content-Encoding is not supported: send it uncompressed (identity).',
  'request.aborted': 'The request body was cut short; send it again.',
  'request.size.invalid': 'The request body is shorter or longer than its Content-Length; send it again.',
};

/** The ID of the request being served: set by the request-id middleware, else the async context, else a new one. */
export function requestIdOf(req?: Request): string {
  const id = req?.id;
  return typeof id === 'string' && id ? id : (currentRequestId() ?? randomUUID());
}

/**
 * Turns anything thrown into an AppError a caller can read. Unknown failures become INTERNAL_ERROR carrying the
 * request ID: the failure itself (message, stack, driver or engine text) goes to the server log only.
 */
export function toAppError(err: unknown, log: Logger, requestId: string = requestIdOf()): AppError {
  if (err instanceof AppError) return err;
  // The router could not percent-decode a path parameter (`/deployments/%ff`).
  if (err instanceof URIError) {
    return new AppError('INVALID_REQUEST', 'The URL path is not valid percent-encoding; encode it with UTF-8.');
  }
  const parser = err as HttpError | undefined;
  if (parser?.type && parser.status && parser.status >= 400 && parser.status < 500) {
    log.info({ err, requestId }, 'request body refused');
    return new AppError(
      'INVALID_REQUEST',
      BODY_ERRORS[parser.type] ??
        'The request body could not be read; send JSON in UTF-8 with a correct Content-Length.',
    );
  }
  log.error({ err, requestId }, 'unhandled error');
  return new AppError('INTERNAL_ERROR', `Internal server error (request ${requestId}); retry with backoff.`, {
    requestId,
  });
}

/** Compatibility API: ErrorResponse {error, code, details}; a 5xx names the request in details.requestId. */
export function compatErrors(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const e = toAppError(err, log, requestIdOf(req));
    const details = e.status >= 500 ? { ...e.details, requestId: requestIdOf(req) } : e.details;
    res.status(e.status).json({ error: e.message, code: compatCodeOf(e.code), details });
  };
}

/** Platform API: PlatformError {status: "error", message}; a 5xx message names the request. */
export function platformErrors(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const e = toAppError(err, log, requestIdOf(req));
    const id = requestIdOf(req);
    const message = e.status >= 500 && !e.message.includes(id) ? `${e.message} (request ${id})` : e.message;
    res.status(e.status).json({ status: 'error', message });
  };
}

/** Entitlement lookup: `{error}` only (spec, "Entitlement lookup"). */
export function entitlementErrors(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const e = toAppError(err, log, requestIdOf(req));
    res.status(e.status).json({ error: e.message });
  };
}

/**
 * Everything outside the three origins (/healthz, /openapi.json, /docs, unknown paths): a JSON answer, never
 * Express's HTML error page.
 */
export function fallbackErrors(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const e = toAppError(err, log, requestIdOf(req));
    const requestId = requestIdOf(req);
    res.status(e.status).json({ error: e.message, ...(e.status >= 500 ? { requestId } : {}) });
  };
}
