import { type Dispatcher, request } from 'undici';

/**
 * Why the router did not do what was asked. `detail` carries Caddy's own words for the worker's log; the message
 * carries none of them (it may reach a deployment's events).
 */
export class EdgeRouterError extends Error {
  override name = 'EdgeRouterError';
  constructor(
    message: string,
    readonly status?: number,
    readonly detail?: string,
  ) {
    super(message);
  }
}

/** Another deployment's route holds this host: taking it over would hand one tenant's address to another. */
export class EdgeHostTakenError extends EdgeRouterError {
  override name = 'EdgeHostTakenError';
}

/** About 1.5 s of attempts in all: long enough for Caddy to swap its admin endpoint, short for a router that is down. */
const ADMIN_ATTEMPTS = 6;
const CONNECTION_LOST = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'UND_ERR_SOCKET']);

export interface Answer {
  status: number;
  body: string;
}

/** Caddy's admin API at `base` (no trailing slash): calls sent again on a lost connection, refusals worded once. */
export function createAdminClient(base: string, timeoutMs: number) {
  // undici's request, not fetch: fetch adds `Sec-Fetch-Mode`, and Caddy's admin API then demands a browser Origin.
  // Caddy replaces its admin endpoint at every config change (a new socket, the old one closed a moment later), so
  // a call right after a change can find its connection reset or refused: it is sent again, on a new connection
  // (`reset`), a few times. Every call here may be repeated safely: the @ids make a second insert fail, not double.
  async function call(method: Dispatcher.HttpMethod, path: string, body?: unknown): Promise<Answer> {
    let last: unknown;
    for (let attempt = 0; attempt < ADMIN_ATTEMPTS; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      try {
        const res = await request(`${base}${path}`, {
          method,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
          reset: true,
        });
        return { status: res.statusCode, body: await res.body.text() };
      } catch (err) {
        last = err;
        if (!CONNECTION_LOST.has((err as { code?: string }).code ?? '')) break;
      }
    }
    throw new EdgeRouterError(
      'the edge router does not answer; start it (npm start) or point EDGE_ADMIN_URL at a running one',
      undefined,
      `${method} ${base}${path}: ${(last as Error).message}`,
    );
  }

  function refused(what: string, answer: Answer): EdgeRouterError {
    // The one refusal an operator fixes by configuration, said as such.
    const taken = /address already in use/.test(answer.body)
      ? ': that port is taken by another program (EDGE_PORT)'
      : '';
    return new EdgeRouterError(
      `the edge router refused to ${what} (HTTP ${answer.status})${taken || '; see the worker log'}`,
      answer.status,
      answer.body.trim().slice(0, 500),
    );
  }

  async function get<T>(path: string): Promise<T | undefined> {
    const answer = await call('GET', path);
    // Caddy answers a path that does not exist (yet) with 400 "invalid traversal path" or 404.
    if (answer.status === 400 || answer.status === 404) return undefined;
    if (answer.status !== 200) throw refused('read its config', answer);
    return (JSON.parse(answer.body) as T | null) ?? undefined;
  }

  return { call, get, refused };
}

/** Caddy refused an insert because the @id is taken: the same route, added by a concurrent call. */
export function duplicateId(answer: Answer): boolean {
  return /duplicate id/i.test(answer.body);
}
