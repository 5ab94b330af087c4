import { isDeepStrictEqual } from 'node:util';

import { type createAdminClient, duplicateId, EdgeHostTakenError, EdgeRouterError } from './admin';
import {
  domainRoute,
  domainRouteId,
  type EdgeTls,
  httpDialOf,
  pkiApp,
  readDomainRoute,
  TLS_FALLBACK_ROUTE_ID,
  tlsAutomation,
  tlsFallbackRoute,
  tlsServerConfig,
} from './domain-routes';
import { checkHost } from './routes';

/** A verified domain as the reconciler wants it on the router. */
export interface WantedDomain {
  domainId: string;
  hostname: string;
  stableHost: string;
}

const same = (a: unknown, b: unknown) => isDeepStrictEqual(a, JSON.parse(JSON.stringify(b)));

/**
 * Custom domains on the router: the TLS server, the issuer's config and one route per verified domain, each keyed by
 * the domain's id. Every operation compares with what the router has before it changes anything, since every change
 * is a reload of the whole router.
 */
export function createDomainRouter(
  admin: ReturnType<typeof createAdminClient>,
  opts: { httpListen: string; tls?: EdgeTls; serverName: string },
) {
  const { call, get, refused } = admin;
  const serverPath = `/config/apps/http/servers/${encodeURIComponent(opts.serverName)}`;

  function tlsOf(): EdgeTls {
    if (!opts.tls) {
      throw new EdgeRouterError(
        'the edge router has no TLS listener configured (EDGE_TLS_PORT); custom domains need one',
      );
    }
    return opts.tls;
  }

  /** Sets `path` to `value` unless it is that already; POST sets or replaces an object in Caddy's admin API. */
  async function setIfChanged(path: string, value: unknown, what: string) {
    if (same(await get(path), value)) return;
    const answer = await call('POST', path, value);
    if (answer.status !== 200) throw refused(what, answer);
  }

  /**
   * The issuer's config and our TLS server, listening where configured and ending in its fallback. Only what is
   * missing or different is sent. The http app must exist (ensureServer of the HTTP side makes it).
   */
  async function ensureTls(): Promise<void> {
    const tls = tlsOf();
    // Issuer before server: a server with hosts and no policy would get the default (public ACME) issuers.
    if (!(await get('/config/apps/tls'))) {
      const answer = await call('POST', '/config/apps/tls', { automation: tlsAutomation(tls) });
      if (answer.status !== 200) throw refused('configure certificates', answer);
    } else await setIfChanged('/config/apps/tls/automation', tlsAutomation(tls), 'configure certificates');
    if (tls.issuer === 'internal') await setIfChanged('/config/apps/pki', pkiApp(), 'configure its local CA');
    const existing = await get<{ listen?: string[] }>(serverPath);
    if (!existing) {
      const answer = await call('PUT', serverPath, tlsServerConfig(tls.listen));
      if (answer.status !== 200 && answer.status !== 409) throw refused(`listen on ${tls.listen.join(', ')}`, answer);
    } else if (!same(existing.listen, tls.listen)) {
      const answer = await call('PATCH', `${serverPath}/listen`, tls.listen);
      if (answer.status !== 200) throw refused('change its TLS listen address', answer);
    }
    if (!(await get(`/id/${TLS_FALLBACK_ROUTE_ID}`))) {
      const answer = await call('POST', `${serverPath}/routes`, tlsFallbackRoute());
      if (answer.status !== 200 && !duplicateId(answer)) throw refused('add its TLS fallback route', answer);
    }
  }

  async function domainRoutes() {
    const raw = (await get<Record<string, unknown>[]>(`${serverPath}/routes`)) ?? [];
    return raw.flatMap((r) => readDomainRoute(r) ?? []);
  }

  /**
   * Routes `hostname` (TLS) to the deployment whose stable host is `stableHost`. Idempotent by domain id; refuses a
   * host another domain's route holds (the api's verified claims make that unreachable, this keeps it so).
   */
  async function publishDomain(domainId: string, hostname: string, stableHost: string): Promise<void> {
    const route = domainRoute(domainId, checkHost(hostname), checkHost(stableHost), httpDialOf(opts.httpListen));
    await ensureTls();
    const id = domainRouteId(domainId);
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await get(`/id/${id}`);
      if (existing && same(existing, route)) return;
      if (existing) {
        const replaced = await call('PATCH', `/id/${id}`, route);
        if (replaced.status === 200) return;
        if (replaced.status !== 404) throw refused(`route ${hostname}`, replaced);
        continue;
      }
      const holder = (await domainRoutes()).find((r) => r.hostname === hostname && r.domainId !== domainId);
      if (holder) throw new EdgeHostTakenError(`the domain ${hostname} is routed for another domain record`, 409);
      const added = await call('PUT', `${serverPath}/routes/0`, route);
      if (added.status === 200) return;
      if (!duplicateId(added)) throw refused(`route ${hostname}`, added);
    }
    throw new EdgeRouterError(`the edge router's config kept changing while trying to route ${hostname}; try again`);
  }

  /** Removes the domain's route; its host then has no route (and, soon, no certificate). Nothing to remove is success. */
  async function unpublishDomain(domainId: string): Promise<void> {
    const answer = await call('DELETE', `/id/${domainRouteId(domainId)}`);
    if (answer.status !== 200 && answer.status !== 404) throw refused('remove a domain route', answer);
  }

  /** Adds the routes of verified domains the router lost (a restart loads no config); returns how many. */
  async function restoreDomains(wanted: WantedDomain[]): Promise<number> {
    if (!opts.tls || wanted.length === 0) return 0;
    const have = new Set((await domainRoutes()).map((r) => r.domainId));
    let added = 0;
    for (const w of wanted) {
      if (have.has(w.domainId)) continue;
      await publishDomain(w.domainId, w.hostname, w.stableHost);
      added++;
    }
    return added;
  }

  return { ensureTls, publishDomain, unpublishDomain, restoreDomains, listDomains: domainRoutes };
}
