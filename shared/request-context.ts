import { AsyncLocalStorage } from 'node:async_hooks';

import type { Logger } from './logger';

/**
 * What the api knows about the request being served, readable anywhere below the HTTP layer without threading it
 * through every signature: services put the request ID on the workflows they start, so an operator can go from a
 * failed request to its workflow in the Temporal UI.
 */
export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

export function runWithRequestContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** The current request's ID, or undefined outside a request (a schedule, a CLI command). */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/**
 * `.catch(logFailure(log, 'what did not happen; what covers it', fields))`: for a step the request goes on without.
 * The failure is logged at warn with the current request's ID, so the line is found from the request (its
 * X-Request-Id, the ID a 5xx names); the step then reads as undefined.
 */
export const logFailure =
  (log: Pick<Logger, 'warn'>, message: string, fields: Record<string, unknown> = {}) =>
  (err: unknown): undefined => {
    log.warn({ err, requestId: currentRequestId(), ...fields }, message);
    return undefined;
  };
