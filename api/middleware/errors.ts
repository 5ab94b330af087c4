import { randomUUID } from 'node:crypto';

import type { ErrorRequestHandler } from 'express';

import { AppError } from '../../shared/errors';
import type { Logger } from '../../shared/logger';

/** Express's body parser reports malformed JSON and oversize bodies with these fields. */
interface BodyParserError {
  type?: string;
  status?: number;
  expose?: boolean;
}

/** Turns anything thrown into an AppError; unknown failures become INTERNAL_ERROR and are logged, never shown. */
export function toAppError(err: unknown, log: Logger): AppError {
  if (err instanceof AppError) return err;
  const parser = err as BodyParserError;
  if (parser?.type === 'entity.parse.failed')
    return new AppError('INVALID_REQUEST', 'The request body is not valid JSON.');
  if (parser?.type === 'entity.too.large') return new AppError('INVALID_REQUEST', 'The request body is too large.');
  if (parser?.expose && parser.status && parser.status < 500) {
    return new AppError('INVALID_REQUEST', (err as Error).message);
  }
  const requestId = randomUUID();
  log.error({ err, requestId }, 'unhandled error');
  return new AppError('INTERNAL_ERROR', 'Internal server error; retry with backoff.', { requestId });
}

/** Compatibility API: ErrorResponse {error, code, details}. */
export function compatErrors(log: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const e = toAppError(err, log);
    res.status(e.status).json({ error: e.message, code: e.code, details: e.details });
  };
}

/** Platform API: PlatformError {status: "error", message}; a 429 keeps its Retry-After header. */
export function platformErrors(log: Logger): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const e = toAppError(err, log);
    const message = e.code === 'INTERNAL_ERROR' ? `${e.message} (request ${String(e.details.requestId)})` : e.message;
    res.status(e.status).json({ status: 'error', message });
  };
}
