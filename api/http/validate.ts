import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';

import { AppError } from '@shared/errors';
import { runWithRequestContext } from '@shared/request-context';

export interface Schemas {
  body?: z.ZodType;
  query?: z.ZodType;
  params?: z.ZodType;
  /** Request headers by their lower-case names (Node's): documented as header parameters. */
  headers?: z.ZodType;
}

export type Parsed<S extends Schemas> = {
  [K in keyof S]: S[K] extends z.ZodType ? z.infer<S[K]> : never;
};

/**
 * A union whose every option refused the value says only "Invalid input"; the option that came closest (fewest
 * issues) says what to fix, so its issues stand for the union's, with their paths from the root.
 */
function closest(issue: z.core.$ZodIssue): z.core.$ZodIssue[] {
  // A record's refused key says only "Invalid key in record"; the key schema's own message says what a key must be.
  if (issue.code === 'invalid_key' && issue.issues.length)
    return issue.issues.flatMap((i) => closest({ ...i, path: [...issue.path, ...i.path] } as z.core.$ZodIssue));
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return [issue];
  const best = issue.errors.reduce((a, b) => (b.length < a.length ? b : a));
  return best.flatMap((i) => closest({ ...i, path: [...issue.path, ...i.path] } as z.core.$ZodIssue));
}

/** zod issues as the `details` of INVALID_REQUEST: where, and what was wrong there. */
export function issuesOf(error: z.ZodError, where: string) {
  return error.issues
    .flatMap(closest)
    .map((i) => ({ in: where, path: i.path.join('.'), message: i.message, code: i.code }));
}

/**
 * Validates the request with the route's zod schemas, then calls the handler with the parsed values,
 * so handlers never touch req.body / req.query / req.params themselves.
 */
export function handle<S extends Schemas>(
  schemas: S,
  fn: (input: Parsed<S>, req: Request, res: Response) => Promise<void> | void,
): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const input: Record<string, unknown> = {};
      for (const where of ['params', 'headers', 'query', 'body'] as const) {
        const schema = schemas[where];
        if (!schema) continue;
        const raw: unknown = where === 'body' ? (req.body ?? {}) : req[where];
        const result = schema.safeParse(raw);
        if (!result.success) {
          const issues = issuesOf(result.error, where);
          const first = issues[0]!;
          const field = first.path ? `${where}.${first.path}` : where;
          throw new AppError('INVALID_REQUEST', `Invalid ${field}: ${first.message}`, { issues });
        }
        input[where] = result.data;
      }
      // Inside the request's context again: body parsers resume on stream callbacks that may have left it.
      await runWithRequestContext({ requestId: String(req.id) }, () => fn(input as Parsed<S>, req, res));
    } catch (err) {
      next(err);
    }
  };
}
