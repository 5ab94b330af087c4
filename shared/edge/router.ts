import { isDeepStrictEqual } from 'node:util';

import { createAdminClient, duplicateId, EdgeHostTakenError, EdgeRouterError } from './admin';
import type { EdgeTls } from './domain-routes';
import { createDomainRouter } from './domains';
import { createHostMetrics } from './host-metrics';
import {
  checkHost,
  checkUpstreams,
  checkUpstreamsDir,
  type EdgeRoute,
  FALLBACK_ROUTE_ID,
  fallbackRoute,
  fileRoute,
  proxyRoute,
  readRoute,
  routeId,
  serverConfig,
  stoppedRoute,
} from './routes';
import { createUpstreamFiles } from './upstream-files';

export { EdgeHostTakenError, EdgeRouterError } from './admin';

export interface EdgeRouterDeps {
  /** Caddy's admin API, e.g. http://127.0.0.1:2019: loopback (or a private network), never public. */
  adminUrl: string;
  /** Addresses our server block listens on, e.g. ["127.0.0.1:8088"]. */
  listen: string[];
  /** Name of our server under apps.http.servers; other servers on a shared router are left alone. */
  serverName?: string;
  /** Per admin call; a router that does not answer must not hold an activity for long. */
  timeoutMs?: number;
  /**
   * A directory the router reads too (EDGE_UPSTREAMS_DIR): routes then read their upstreams from files in it, and a
   * switch, a stop or a start changes no config. Without one, upstreams are in the config and each change reloads it.
   */
  upstreamsDir?: string;
  /** A TLS server for custom domains (shared/edge/domains.ts); without it domains cannot be routed. */
  tls?: EdgeTls;
  /** Name of the TLS server under apps.http.servers. */
  tlsServerName?: string;
}

/** A deployment the reconciler knows: its upstreams while it runs, none while it is stopped. */
export interface WantedRoute {
  deploymentId: string;
  host: string;
  upstreams: string[];
}

/** What restore() put back for one deployment. */
export interface Restored {
  deploymentId: string;
  /** The route was missing (the router restarted empty) and was added. */
  route: boolean;
  /** Replicas whose upstream file was missing and was written. */
  files: number[];
}

/**
 * A client of Caddy's admin API for the routes of Slipway's deployments. Every operation is idempotent and keyed
 * by deployment id (the route's @id): running it twice, or after a half-finished attempt, ends in the same config.
 * Each change is one admin call, and Caddy applies a config change atomically: a request sees the old route or
 * the new one, never neither. But every config change is a reload, and a reload drops the requests the previous
 * config accepted and had not read yet (docs/architecture.md, "Edge router"): with an upstreams directory, a route
 * is only changed when it is missing or its replica count changes, and everything else is a file written.
 */
export function createEdgeRouter({
  adminUrl,
  listen,
  serverName = 'slipway',
  timeoutMs = 10_000,
  upstreamsDir,
  tls,
  tlsServerName = 'slipway-tls',
}: EdgeRouterDeps) {
  const base = adminUrl.replace(/\/+$/, '');
  const serverPath = `/config/apps/http/servers/${encodeURIComponent(serverName)}`;
  const dir = upstreamsDir === undefined ? undefined : checkUpstreamsDir(upstreamsDir);
  const files = dir === undefined ? undefined : createUpstreamFiles(dir);

  const admin = createAdminClient(base, timeoutMs);
  const { call, get, refused } = admin;
  const domains = createDomainRouter(admin, {
    httpListen: listen[0]!,
    serverName: tlsServerName,
    ...(tls ? { tls } : {}),
  });

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
    await ensureHttpServer();
    if (tls) await domains.ensureTls();
  }

  async function ensureHttpServer(): Promise<void> {
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
   * Adds the deployment's route before the fallback unless it has one; false when it had. Refuses a host another
   * deployment holds.
   */
  async function add(deploymentId: string, host: string, route: Record<string, unknown>, what: string) {
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await get<Record<string, unknown>[]>(`${serverPath}/routes`);
      // No server block: the router restarted empty. Make it, then try again.
      if (!current) {
        await ensureServer();
        continue;
      }
      const ours = current.flatMap((raw) => readRoute(raw) ?? []);
      if (ours.some((r) => r.deploymentId === deploymentId)) return false;
      const holder = ours.find((r) => r.host === host);
      if (holder) throw new EdgeHostTakenError(`the address ${host} already belongs to another deployment`, 409);
      const added = await call('PUT', `${serverPath}/routes/0`, route);
      if (added.status === 200) return true;
      // A concurrent publish of the same deployment added it first.
      if (duplicateId(added)) return false;
      throw refused(what, added);
    }
    throw new EdgeRouterError(`the edge router's config kept changing while trying to ${what}; try again`);
  }

  /**
   * Makes the deployment's route `route`: nothing when it is that already (no reload), else one PATCH on its @id
   * (the switch is atomic), or an add when it has none.
   */
  async function put(deploymentId: string, host: string, route: Record<string, unknown>, what: string) {
    const id = routeId(deploymentId);
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await get<Record<string, unknown>>(`/id/${id}`);
      // Caddy keeps the JSON it was given: equal values mean an equal route.
      if (existing && isDeepStrictEqual(existing, JSON.parse(JSON.stringify(route)))) return;
      if (existing) {
        const replaced = await call('PATCH', `/id/${id}`, route);
        if (replaced.status === 200) return;
        if (replaced.status !== 404) throw refused(what, replaced);
      }
      // Added, or added by a concurrent publish of the same deployment: the next turn makes it `route`.
      if (await add(deploymentId, host, route, what)) return;
    }
    throw new EdgeRouterError(`the edge router's config kept changing while trying to ${what}; try again`);
  }

  /** The deployment's route as the router has it now, when it has one. */
  async function shapeOf(deploymentId: string) {
    const existing = await get<Record<string, unknown>>(`/id/${routeId(deploymentId)}`);
    return existing && readRoute(existing);
  }

  async function list(): Promise<EdgeRoute[]> {
    const ours = (await routes()).flatMap((raw) => readRoute(raw) ?? []);
    return Promise.all(
      ours.map(async ({ deploymentId, host, shape }): Promise<EdgeRoute> => {
        if (shape.kind === 'proxy') return { deploymentId, host, state: 'published', upstreams: shape.upstreams };
        if (shape.kind === 'stopped') return { deploymentId, host, state: 'stopped', upstreams: [] };
        const read = await createUpstreamFiles(shape.dir).read(deploymentId, shape.replicas);
        const upstreams = read.flatMap((u) => (u ? [u] : []));
        return { deploymentId, host, state: read[0] ? 'published' : 'stopped', upstreams: read[0] ? upstreams : [] };
      }),
    );
  }

  /** Routes `host` to the deployment's replicas (host:port each), replacing whatever the deployment had. */
  async function publish(deploymentId: string, host: string, upstreams: string[]): Promise<void> {
    const what = `publish ${host}`;
    if (!files || !dir) return put(deploymentId, host, proxyRoute(deploymentId, checkHost(host), upstreams), what);
    const wanted = checkUpstreams(upstreams);
    const route = fileRoute(deploymentId, checkHost(host), dir, wanted.length);
    // The files first: a route that exists switches here, without a reload; one that is new or changes its replica
    // count finds its files in place.
    await files.write(deploymentId, wanted);
    try {
      await put(deploymentId, host, route, what);
    } catch (err) {
      // No route of this deployment reads them: the host is another's.
      if (err instanceof EdgeHostTakenError) await files.remove(deploymentId);
      throw err;
    }
    await files.removeFrom(deploymentId, wanted.length);
  }

  /** The router answers the deployment's host itself: a 503 page saying it is stopped and what to do. */
  async function showStopped(deploymentId: string, host: string): Promise<void> {
    const what = `mark ${host} stopped`;
    if (!files || !dir) return put(deploymentId, host, stoppedRoute(deploymentId, checkHost(host)), what);
    checkHost(host);
    const current = await shapeOf(deploymentId);
    // Without replica 0's file, a file route answers the stopped page; its replica count is kept for the start.
    await files.remove(deploymentId);
    const replicas = current?.shape.kind === 'files' && current.shape.dir === dir ? current.shape.replicas : 1;
    await put(deploymentId, host, fileRoute(deploymentId, host, dir, replicas), what);
  }

  /**
   * Puts back what a running or stopped deployment is missing, never changing what is there: its route when the
   * router lost it (a restart loads no config), and the upstream files its route reads when they are gone (an empty
   * one answers 502). A file is only written where none is, so a switch made by the deployment's own publish
   * meanwhile always wins over what was read before it.
   */
  async function restore(wanted: WantedRoute[]): Promise<Restored[]> {
    const current = new Map((await routes()).flatMap((raw) => readRoute(raw) ?? []).map((r) => [r.deploymentId, r]));
    const done: Restored[] = [];
    for (const w of wanted) {
      const host = checkHost(w.host);
      const upstreams = w.upstreams.length ? checkUpstreams(w.upstreams) : [];
      const have = current.get(w.deploymentId);
      const restored: Restored = { deploymentId: w.deploymentId, route: false, files: [] };
      if (!files || !dir) {
        if (!have) {
          const route = upstreams.length
            ? proxyRoute(w.deploymentId, host, upstreams)
            : stoppedRoute(w.deploymentId, host);
          restored.route = await add(w.deploymentId, host, route, `restore ${host}`);
        }
      } else if (!have) {
        if (upstreams.length) restored.files = await files.fill(w.deploymentId, upstreams);
        const route = fileRoute(w.deploymentId, host, dir, Math.max(1, upstreams.length));
        restored.route = await add(w.deploymentId, host, route, `restore ${host}`);
      } else if (have.shape.kind === 'files' && have.shape.dir === dir && upstreams.length) {
        restored.files = await files.fill(w.deploymentId, upstreams.slice(0, have.shape.replicas));
      }
      if (restored.route || restored.files.length) done.push(restored);
    }
    return done;
  }

  return {
    ensureServer,
    ...domains,
    ...createHostMetrics(admin, { listen, serverName }),
    publish,
    showStopped,

    /** Removes the deployment's route, then its files; its host then gets the router's 404. Nothing to remove is success. */
    async unpublish(deploymentId: string): Promise<void> {
      const answer = await call('DELETE', `/id/${routeId(deploymentId)}`);
      if (answer.status !== 200 && answer.status !== 404) throw refused('remove a route', answer);
      await files?.remove(deploymentId);
    },

    /** Our deployments' routes as the router has them now (a file route's upstreams as its files hold them). */
    list,
    restore,
  };
}

export type EdgeRouter = ReturnType<typeof createEdgeRouter>;
