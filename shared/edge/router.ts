import { type Dispatcher, request } from 'undici';

import {
  checkHost,
  type EdgeRoute,
  FALLBACK_ROUTE_ID,
  fallbackRoute,
  proxyRoute,
  readRoute,
  routeId,
  serverConfig,
  stoppedRoute,
} from './routes';

export interface EdgeRouterDeps {
  /** Caddy's admin API, e.g. http://127.0.0.1:2019: loopback (or a private network), never public. */
  adminUrl: string;
  /** Addresses our server block listens on, e.g. ["127.0.0.1:8088"]. */
  listen: string[];
  /** Name of our server under apps.http.servers; other servers on a shared router are left alone. */
  serverName?: string;
  /** Per admin call; a router that does not answer must not hold an activity for long. */
  timeoutMs?: number;
}

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

interface Answer {
  status: number;
  body: string;
}

/**
 * A client of Caddy's admin API for the routes of Slipway's deployments. Every operation is idempotent and keyed
 * by deployment id (the route's @id): running it twice, or after a half-finished attempt, ends in the same config.
 * Each change is one admin call, and Caddy applies a config change atomically: a request sees the old route or
 * the new one, never neither.
 */
export function createEdgeRouter({ adminUrl, listen, serverName = 'slipway', timeoutMs = 10_000 }: EdgeRouterDeps) {
  const base = adminUrl.replace(/\/+$/, '');
  const serverPath = `/config/apps/http/servers/${encodeURIComponent(serverName)}`;

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

  async function routes(): Promise<Record<string, unknown>[]> {
    return (await get<Record<string, unknown>[]>(`${serverPath}/routes`)) ?? [];
  }

  /** Brings an existing server block to our listen addresses and fallback; false when there is none. */
  async function reconcileServer(): Promise<boolean> {
    const existing = await get<{ listen?: string[] }>(serverPath);
    if (!existing) return false;
    if (JSON.stringify(existing.listen) !== JSON.stringify(listen)) {
      const answer = await call('PATCH', `${serverPath}/listen`, listen);
      if (answer.status !== 200) throw refused('change its listen address', answer);
    }
    if (!(await get(`/id/${FALLBACK_ROUTE_ID}`))) {
      const answer = await call('POST', `${serverPath}/routes`, fallbackRoute());
      if (answer.status !== 200 && !duplicateId(answer)) throw refused('add its fallback route', answer);
    }
    return true;
  }

  /**
   * Our server block exists, listens where configured and ends in the fallback. Creates only what is missing, so
   * other apps and servers of a shared router are untouched. Run at start and after the router restarted empty.
   */
  async function ensureServer(): Promise<void> {
    if (await reconcileServer()) return;
    // Caddy's PUT makes the missing levels (apps, http, servers) on the way; 409 is a concurrent ensureServer.
    let answer = await call('PUT', serverPath, serverConfig(listen));
    if (answer.status === 400 && (await call('GET', '/config/')).body.trim() === 'null') {
      // A router started with no config at all has no object to put ours in: load ours as its whole config.
      answer = await call('POST', '/load', { apps: { http: { servers: { [serverName]: serverConfig(listen) } } } });
    }
    if (answer.status !== 200 && answer.status !== 409) throw refused(`listen on ${listen.join(', ')}`, answer);
    if (!(await reconcileServer()))
      throw new EdgeRouterError('the edge router lost its server block while it was made');
  }

  /**
   * Puts `route` in place of the deployment's current one, or adds it before the fallback. Replacing is one PATCH
   * on the route's @id: the switch of upstreams is atomic. Adding checks that no other deployment holds the host.
   */
  async function put(deploymentId: string, host: string, route: Record<string, unknown>, what: string) {
    const id = routeId(deploymentId);
    for (let attempt = 0; attempt < 3; attempt++) {
      const replaced = await call('PATCH', `/id/${id}`, route);
      if (replaced.status === 200) return;
      if (replaced.status !== 404) throw refused(what, replaced);
      const current = await get<Record<string, unknown>[]>(`${serverPath}/routes`);
      // No server block: the router restarted empty. Make it, then try again.
      if (!current) {
        await ensureServer();
        continue;
      }
      const holder = current.flatMap((raw) => readRoute(raw) ?? []).find((r) => r.host === host);
      if (holder && holder.deploymentId !== deploymentId) {
        throw new EdgeHostTakenError(`the address ${host} already belongs to another deployment`, 409);
      }
      const added = await call('PUT', `${serverPath}/routes/0`, route);
      if (added.status === 200) return;
      // A concurrent publish of the same deployment added it first: the next turn replaces that one.
      if (!duplicateId(added)) throw refused(what, added);
    }
    throw new EdgeRouterError(`the edge router's config kept changing while trying to ${what}; try again`);
  }

  async function list(): Promise<EdgeRoute[]> {
    return (await routes()).flatMap((raw) => readRoute(raw) ?? []);
  }

  return {
    ensureServer,

    /** Routes `host` to the deployment's replicas (host:port each), replacing whatever the deployment had. */
    publish(deploymentId: string, host: string, upstreams: string[]): Promise<void> {
      return put(deploymentId, host, proxyRoute(deploymentId, checkHost(host), upstreams), `publish ${host}`);
    },

    /** The router answers the deployment's host itself: a 503 page saying it is stopped and what to do. */
    showStopped(deploymentId: string, host: string): Promise<void> {
      return put(deploymentId, host, stoppedRoute(deploymentId, checkHost(host)), `mark ${host} stopped`);
    },

    /** Removes the deployment's route; its host then gets the router's 404. Nothing to remove is success. */
    async unpublish(deploymentId: string): Promise<void> {
      const answer = await call('DELETE', `/id/${routeId(deploymentId)}`);
      if (answer.status !== 200 && answer.status !== 404) throw refused('remove a route', answer);
    },

    /** Our deployments' routes as the router has them now. */
    list,
  };
}

export type EdgeRouter = ReturnType<typeof createEdgeRouter>;

function duplicateId(answer: Answer): boolean {
  return /duplicate id/i.test(answer.body);
}
