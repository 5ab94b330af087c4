import { z } from 'zod';

/** The origins' bodies (spec, "Errors"): every route documents its answers with these, every renderer writes them. */

/** Compatibility API errors: `code` is one of the compat interface's codes (shared/errors.ts maps every other code). */
export const ErrorResponse = z
  .object({ error: z.string(), code: z.string(), details: z.record(z.string(), z.unknown()) })
  .meta({ id: 'ErrorResponse' });

export const PlatformError = z
  .object({ status: z.literal('error'), message: z.string() })
  .meta({ id: 'PlatformError' });

/**
 * One event of a text/event-stream answer, as a client's parser reads it (comments such as heartbeats are none):
 * every event of ours has an `id` to resume after, a type, and a JSON text as `data`.
 */
export const ServerSentEvent = z
  .object({ id: z.string(), event: z.string(), data: z.string() })
  .meta({ id: 'ServerSentEvent' });

/** A platform success: `{status: "success", data}`. */
export const success = <T extends z.ZodType>(data: T) => z.object({ status: z.literal('success'), data });

/** The body of a platform success, so handlers never spell the envelope. */
export const ok = <T>(data: T) => ({ status: 'success' as const, data });
