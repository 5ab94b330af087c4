import { z } from 'zod';

import { VISIBLE } from '@shared/patterns';

/**
 * Request fields whose whole rule the OpenAPI document must state, where zod's own JSON Schema says less than zod
 * checks: a client (or a fuzzer) that follows the document is then never refused for something it does not say.
 */

/**
 * An e-mail address as zod checks one, stated as that pattern alone: `format: email` would admit addresses zod
 * refuses (`a=b@c.io`) and refuse some it takes (a local part over 64 characters).
 */
export const email = (message = 'an e-mail address') => z.string().regex(z.regexes.email, message);

/** Text stored trimmed that must hold more than white space (a title, a message). */
export const text = (max: number) =>
  z.string().regex(new RegExp(VISIBLE), 'has only white space; write some text').trim().min(1).max(max);

/**
 * An integer in a query string, written in digits. Not z.coerce.number(): that reads `?offset=` as 0 and `1e3` as
 * 1000, which the document's `integer` calls invalid; a number (an MCP argument) passes as it is.
 */
export const queryInt = (min: number, max: number) =>
  z.preprocess(
    (v) => (typeof v === 'string' && /^-?\d{1,16}$/.test(v) ? Number(v) : v),
    z.number({ error: 'a whole number, in digits' }).int().min(min).max(max),
  );

/**
 * A create request's idempotency key travels as the body's `requestId`, the name clients send; inside the api it is
 * the `idempotencyKey`, so that `requestId` names one thing only: the X-Request-Id that correlates a request's log
 * lines, audit event and workflow.
 */
export const IDEMPOTENCY_FIELD = 'requestId';

/** The body with its `requestId` renamed `idempotencyKey`, as the services take it. */
export function withIdempotencyKey<T extends { requestId?: string | undefined }>(
  body: T,
): Omit<T, typeof IDEMPOTENCY_FIELD> & { idempotencyKey?: string } {
  const { requestId: idempotencyKey, ...rest } = body;
  return { ...rest, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) };
}
