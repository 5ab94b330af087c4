import { z } from 'zod';

import type { Principal } from '@shared/identity/service';
import type { Permission } from '@shared/permissions';

/**
 * What an agent should call next: named as a tool and its arguments, so an agent acts on it without parsing prose.
 * Every success that leaves something to do, and every error an agent can act on, carries one.
 */
export const Next = z
  .object({
    tool: z.string(),
    arguments: z.record(z.string(), z.unknown()).optional(),
    why: z.string(),
  })
  .meta({ description: 'The call that moves the task on' });
export type Next = z.infer<typeof Next>;

/**
 * Every failed call (`isError: true`), as the JSON last line of its text (errors.ts): the compat code
 * (shared/errors.ts), whether retrying the same call can succeed, and when. Business failures are results, never
 * JSON-RPC errors, so an agent reads them; never structuredContent, which a client checks against the tool's
 * outputSchema, the shape of its answer.
 */
export const ToolError = z.object({
  code: z.string(),
  message: z.string(),
  retryable: z.boolean(),
  retryAfterS: z.number().int().optional(),
  next: Next.optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type ToolError = z.infer<typeof ToolError>;

/** MCP's tool annotations (all four stated on every tool, never left to a client's defaults). */
export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  /** True when the tool reaches beyond Slipway's own records (an engine, a registry, a seller's endpoint). */
  openWorldHint: boolean;
}

/** One call as a handler sees it: who calls, with the arguments its input schema parsed. */
export interface ToolCall<I> {
  principal: Principal;
  input: I;
  /** Aborted when the client cancels or goes away; long waits give up early. */
  signal: AbortSignal;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a list of tools of every input and output type
type AnyObject = z.ZodObject<any>;

/**
 * One MCP tool, defined once over the services (docs/architecture.md, "MCP") and served by both transports (HTTP and
 * stdio). The input is built from the REST routes' zod schemas, so a tool accepts what the route accepts.
 */
export interface ToolDef<I extends AnyObject = AnyObject, O extends AnyObject = AnyObject> {
  name: string;
  title: string;
  description: string;
  /** Listed and callable only when the token's scopes and the user's role hold it; null: any valid token. */
  permission: Permission | null;
  /**
   * The project the call touches, so the project role decides as it does for the route (undefined: the org's).
   * A resource the caller's organisation does not hold resolves to undefined; the handler then answers not-found.
   */
  project?: (principal: Principal, input: z.output<I>) => Promise<string | undefined>;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /**
   * The audit event of a tool that changes something (action = the tool's name): the resource it names. `skip`
   * says when a call changes nothing (a preview) and is not recorded.
   */
  audit?: {
    resource: string;
    id: (input: z.output<I>, output?: z.output<O>) => string | undefined;
    skip?: (input: z.output<I>) => boolean;
  };
  run: (call: ToolCall<z.output<I>>) => Promise<z.input<O>>;
}

export const defineTool = <I extends AnyObject, O extends AnyObject>(t: ToolDef<I, O>): ToolDef =>
  t as unknown as ToolDef;

/** Annotations of the usual kinds of tool. */
export const READ: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
export const WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: true,
};
/** Removes or revokes something of Slipway's own records, which no call brings back as it was. */
export const DESTRUCTIVE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: false,
  openWorldHint: false,
};
