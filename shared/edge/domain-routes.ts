import { checkHost, EdgeInputError, hostPort } from './routes';
import { NO_STORE } from './stopped-page';

/**
 * The Caddy JSON of custom domains (docs/architecture.md, "Custom domains on the edge"): a TLS server of their own
 * beside the deployments' HTTP one, and one route per verified domain. Pure, like routes.ts.
 */

const DOMAIN_ROUTE_PREFIX = 'slipway-domain-';
export const TLS_FALLBACK_ROUTE_ID = 'slipway-edge-tls-fallback';
const DOMAIN_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;

const json = (value: object) => value as Record<string, unknown>;

/** Domain ids reach a URL path of the admin API, like deployment ids: a plain token or nothing. */
export function domainRouteId(domainId: string): string {
  if (!DOMAIN_ID.test(domainId)) {
    throw new EdgeInputError('a domain id is letters, digits, "-" or "_", at most 100 characters');
  }
  return `${DOMAIN_ROUTE_PREFIX}${domainId}`;
}

export function domainIdOf(id: unknown): string | undefined {
  return typeof id === 'string' && id.startsWith(DOMAIN_ROUTE_PREFIX)
    ? id.slice(DOMAIN_ROUTE_PREFIX.length)
    : undefined;
}

/** How certificates for custom domains are issued: ACME in production, Caddy's own local CA otherwise. */
export interface EdgeTls {
  /** Addresses the TLS server listens on, e.g. ["127.0.0.1:8443"]. */
  listen: string[];
  issuer: 'acme' | 'internal';
  /** The ACME account's contact; optional for most CAs. */
  acmeEmail?: string;
}

/**
 * The address the TLS server's routes dial to reach the deployments' HTTP server: its listen address, with an
 * unspecified one reached on loopback.
 */
export function httpDialOf(listen: string): string {
  const m = /^(?:\[(.+)\]|([^:]+)):(\d+)$/.exec(listen);
  if (!m) throw new EdgeInputError(`"${listen}" is not a host:port listen address`);
  const host = m[1] ?? m[2]!;
  return hostPort(host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host, Number(m[3]));
}

/**
 * One verified domain: its host, on the TLS server, is passed to our own HTTP server with the Host header of the
 * deployment's stable address, so the deployment's route there answers it. Nothing in this route depends on the
 * deployment's releases, replicas or state: a redeploy, rollback, scale, stop or start changes the deployment's route
 * alone, and the domain follows it without this route ever being written again. The app sees the domain in
 * X-Forwarded-Host and https in X-Forwarded-Proto (the HTTP server trusts loopback's forwarded headers).
 */
export function domainRoute(domainId: string, hostname: string, stableHost: string, httpDial: string) {
  return json({
    '@id': domainRouteId(domainId),
    match: [{ host: [checkHost(hostname)] }],
    handle: [
      {
        handler: 'reverse_proxy',
        upstreams: [{ dial: httpDial }],
        headers: { request: { set: { Host: [checkHost(stableHost)] } } },
        // As on the deployments' routes: a reload must not cut every open WebSocket at once.
        stream_close_delay: '10m',
      },
    ],
    terminal: true,
  });
}

/** A domain route read back: which domain, which host, and which stable host it passes to. */
export function readDomainRoute(raw: {
  '@id'?: unknown;
  match?: { host?: string[] }[];
  handle?: { headers?: { request?: { set?: { Host?: string[] } } } }[];
}): { domainId: string; hostname: string; stableHost: string } | undefined {
  const domainId = domainIdOf(raw['@id']);
  const hostname = raw.match?.[0]?.host?.[0];
  const stableHost = raw.handle?.[0]?.headers?.request?.set?.Host?.[0];
  if (!domainId || !hostname || !stableHost) return undefined;
  return { domainId, hostname, stableHost };
}

/** Last route of the TLS server: a name with a certificate but no domain route (just removed) gets a 404. */
export function tlsFallbackRoute() {
  return json({
    '@id': TLS_FALLBACK_ROUTE_ID,
    handle: [
      {
        handler: 'static_response',
        status_code: 404,
        headers: { 'Content-Type': ['text/plain; charset=utf-8'], ...NO_STORE },
        body: 'No verified Slipway domain answers at this address: add and verify it with POST /platform/domains.\n',
      },
    ],
    terminal: true,
  });
}

/**
 * The TLS server. Automatic HTTPS manages a certificate for every host its routes match (each domain route is one),
 * with the issuer of tlsApp; it is on although the port is not 443 because the server has a connection policy.
 * Redirects from HTTP are off: the HTTP server keeps serving stable addresses on its own port.
 */
export function tlsServerConfig(listen: string[]) {
  return json({
    listen,
    tls_connection_policies: [{}],
    automatic_https: { disable_redirects: true },
    routes: [tlsFallbackRoute()],
  });
}

/** apps.tls.automation: every managed name gets its certificate from the configured issuer. */
export function tlsAutomation(tls: Pick<EdgeTls, 'issuer' | 'acmeEmail'>) {
  const issuer =
    tls.issuer === 'internal'
      ? { module: 'internal', ca: 'local' }
      : { module: 'acme', ...(tls.acmeEmail ? { email: tls.acmeEmail } : {}) };
  return json({ policies: [{ issuers: [issuer] }] });
}

/**
 * apps.pki: Caddy's local CA, never installed into this machine's trust store (it would need root, and a test or a
 * developer trusts it explicitly: `<Caddy's storage>/pki/authorities/local/root.crt`).
 */
export function pkiApp() {
  return json({ certificate_authorities: { local: { install_trust: false } } });
}
