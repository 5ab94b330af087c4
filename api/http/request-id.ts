import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

import type { RequestHandler } from 'express';

import { runWithRequestContext } from '@shared/request-context';

export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A caller's own ID is kept when it is a plain token (a proxy or client correlating its logs with ours); anything
 * else — long, spaced, with control characters that could forge log lines — is replaced by a fresh UUID.
 */
const SANE_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;

/** The request's ID, answered in the x-request-id header; used by the access log as the request's `id`. */
export function assignRequestId(req: IncomingMessage, res: ServerResponse): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  const id = typeof incoming === 'string' && SANE_ID.test(incoming) ? incoming : randomUUID();
  res.setHeader(REQUEST_ID_HEADER, id);
  return id;
}

/**
 * Runs the rest of the request inside its request context, so services can tag what they start (workflows) with
 * the request ID. Streams (body parsers) may resume callbacks outside it; route handlers re-enter it (validate.ts).
 */
export const requestContext: RequestHandler = (req, _res, next) => {
  runWithRequestContext({ requestId: String(req.id) }, next);
};
