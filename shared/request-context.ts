import { AsyncLocalStorage } from 'node:async_hooks';

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
