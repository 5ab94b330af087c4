import net from 'node:net';

import { NO_STORE, stoppedPages } from './stopped-page';

/**
 * The Caddy JSON the edge router is driven with (docs/architecture.md, "Edge router"), and the stable addresses of
 * deployments. Pure: no I/O here, so what the router is told can be read and tested without one.
 */

/** Where deployments are reached: `http://<name>-<short id>.<domain>:<port>`. */
export interface EdgeAddressing {
  domain: string;
  port: number;
}

/** Every route of ours carries an @id with this prefix, so it can be replaced or deleted alone via /id/<id>. */
const ROUTE_ID_PREFIX = 'slipway-deployment-';
export const FALLBACK_ROUTE_ID = 'slipway-edge-fallback';

/**
 * 12 hex characters (48 bits): with 8, a hundred thousand deployments sharing a common name ("app") would
 * likely contain two with the same host; with 12 that is about one chance in fifty thousand, and publish refuses
 * a host another deployment holds rather than taking it over.
 */
const SHORT_ID_LENGTH = 12;
/** A DNS label is at most 63 characters: the name part leaves room for "-" and the short id. */
const NAME_MAX = 63 - 1 - SHORT_ID_LENGTH;

const DEPLOYMENT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/;
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

export class EdgeInputError extends Error {
  override name = 'EdgeInputError';
}

/** Deployment ids reach a URL path of the admin API: anything but a plain token is refused before that. */
export function routeId(deploymentId: string): string {
  if (!DEPLOYMENT_ID.test(deploymentId)) {
    throw new EdgeInputError('a deployment id is letters, digits, "-" or "_", at most 100 characters');
  }
  return `${ROUTE_ID_PREFIX}${deploymentId}`;
}

export function deploymentIdOf(id: unknown): string | undefined {
  return typeof id === 'string' && id.startsWith(ROUTE_ID_PREFIX) ? id.slice(ROUTE_ID_PREFIX.length) : undefined;
}

export function checkHost(host: string): string {
  if (!HOSTNAME.test(host)) throw new EdgeInputError(`"${host}" is not a lower-case DNS host name`);
  return host;
}

/** A deployment's name as a DNS label: lower case, runs of anything else as one "-", never empty. */
export function nameLabel(name: string): string {
  const label = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, NAME_MAX)
    .replace(/^-+|-+$/g, '');
  return label || 'app';
}

export function shortId(deploymentId: string): string {
  routeId(deploymentId);
  return deploymentId
    .replace(/[^A-Za-z0-9]/g, '')
    .toLowerCase()
    .slice(0, SHORT_ID_LENGTH);
}

/** The deployment's host: fixed by its name and id at creation, so it never changes for that deployment. */
export function deploymentHost(name: string, deploymentId: string, domain: string): string {
  return checkHost(`${nameLabel(name)}-${shortId(deploymentId)}.${domain.toLowerCase().replace(/\.$/, '')}`);
}

export function deploymentUrl(name: string, deploymentId: string, at: EdgeAddressing): string {
  const host = deploymentHost(name, deploymentId, at.domain);
  return at.port === 80 ? `http://${host}` : `http://${host}:${at.port}`;
}

/** `host:port` as Caddy dials it (IPv6 in brackets). */
export function hostPort(host: string, port: number): string {
  return net.isIPv6(host) ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The address the router dials for one instance: its host-published port. An unspecified bind address (0.0.0.0,
 * ::) is reached on loopback; `upstreamHost` overrides that for a router that is not on the engine's host.
 */
export function upstreamFor(instance: { hostPort: number }, bindIp: string, upstreamHost?: string): string {
  const host = upstreamHost || (bindIp === '0.0.0.0' ? '127.0.0.1' : bindIp === '::' ? '::1' : bindIp);
  return hostPort(host, instance.hostPort);
}

const UPSTREAM = /^(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;

export function checkUpstreams(upstreams: string[]): string[] {
  if (upstreams.length === 0) throw new EdgeInputError('publish needs at least one upstream; use showStopped instead');
  for (const u of upstreams) if (!UPSTREAM.test(u)) throw new EdgeInputError(`upstream "${u}" is not host:port`);
  return [...new Set(upstreams)];
}

const json = (value: object) => value as Record<string, unknown>;

/**
 * The upstreams directory is written into routes inside a `{file.…}` placeholder and a file matcher's root (which
 * Caddy globs): plain path characters only, absolute, without a trailing "/".
 */
const UPSTREAMS_DIR = /^(?:\/[A-Za-z0-9._-]+)+$/;

export function checkUpstreamsDir(dir: string): string {
  const clean = dir.replace(/\/+$/, '');
  if (!UPSTREAMS_DIR.test(clean) || clean.split('/').some((part) => part === '..' || part === '.')) {
    throw new EdgeInputError(
      `the upstreams directory "${dir}" must be an absolute path of letters, digits, ".", "_", "-" and "/"`,
    );
  }
  return clean;
}

/**
 * Round robin over the replicas; a failed dial is tried again on the next one at once, so a dead replica costs no
 * request. At once, not after an interval: Caddy waits out `try_interval` on the handler's context, which every
 * config reload (any deployment's publish or removal) cancels, and a request waiting then is answered 502 (measured:
 * with reloads every 30 ms, every request that met a stopped replica of three was a 502 with a 100 ms interval).
 * Passive health (an instance that failed is left out for a while) only where the dial is the address itself: Caddy
 * keeps health per dial string as written (reverseproxy/hosts.go, fillHost keys by Upstream.Dial), so for a
 * `{file.…}` dial it would be kept per file, not per instance, and the failures of an instance just switched away
 * from would keep its successor out of rotation for the whole fail duration, with a single replica answering 503.
 */
function reverseProxy(dials: string[], passiveHealth: boolean) {
  return {
    handler: 'reverse_proxy',
    upstreams: dials.map((dial) => ({ dial })),
    load_balancing: {
      selection_policy: { policy: 'round_robin' },
      retries: Math.max(2, dials.length),
      try_interval: '0s',
    },
    ...(passiveHealth ? { health_checks: { passive: { fail_duration: '10s', max_fails: 1 } } } : {}),
    // Every admin change reloads the whole config; without a delay, each one would cut every open WebSocket
    // of every deployment at once.
    stream_close_delay: '10m',
  };
}

/** One deployment's route with its replicas' addresses in the config: every switch is a config reload. */
export function proxyRoute(deploymentId: string, host: string, upstreams: string[]) {
  return json({
    '@id': routeId(deploymentId),
    match: [{ host: [checkHost(host)] }],
    handle: [reverseProxy(checkUpstreams(upstreams), true)],
    terminal: true,
  });
}

/** Where replica `i` of the deployment has its address (upstream-files.ts writes it). */
export const upstreamFile = (dir: string, deploymentId: string, i: number) => `${dir}/${deploymentId}/${i}`;

/**
 * One deployment's route whose `replicas` upstreams are read from files at each request (upstream-files.ts), so a
 * switch to other instances, a stop and a start change files, not the config. Replica 0's file decides: present, the
 * route proxies; absent, the router answers the stopped page. The config changes only with the replica count.
 */
export function fileRoute(deploymentId: string, host: string, dir: string, replicas: number) {
  if (!Number.isInteger(replicas) || replicas < 1) throw new EdgeInputError('a route needs at least one replica');
  const dials = Array.from({ length: replicas }, (_, i) => `{file.${upstreamFile(dir, deploymentId, i)}}`);
  return json({
    '@id': routeId(deploymentId),
    match: [{ host: [checkHost(host)] }],
    handle: [
      {
        handler: 'subroute',
        routes: [
          {
            match: [{ file: { root: dir, try_files: [`/${deploymentId}/0`] } }],
            handle: [reverseProxy(dials, false)],
            terminal: true,
          },
          ...stoppedPages(deploymentId, host),
        ],
      },
    ],
    terminal: true,
  });
}

/** A stopped deployment's route when upstreams are in the config: the router itself answers 503. */
export function stoppedRoute(deploymentId: string, host: string) {
  return json({
    '@id': routeId(deploymentId),
    match: [{ host: [checkHost(host)] }],
    handle: [{ handler: 'subroute', routes: stoppedPages(deploymentId, host) }],
    terminal: true,
  });
}

/** Last route: a host no deployment holds gets the router's own 404, not an empty 200. */
export function fallbackRoute() {
  return json({
    '@id': FALLBACK_ROUTE_ID,
    handle: [
      {
        handler: 'static_response',
        status_code: 404,
        headers: { 'Content-Type': ['text/plain; charset=utf-8'], ...NO_STORE },
        body:
          'No Slipway deployment answers at this address. Check the host name: a deployment\'s address is the "url" ' +
          'in its status, and a destroyed deployment has none.\n',
      },
    ],
    terminal: true,
  });
}

/** Our server block: plain HTTP on the listen addresses (TLS is for custom domains), fallback last. */
export function serverConfig(listen: string[]) {
  return json({
    listen,
    // Host matchers would otherwise make Caddy fetch certificates and serve TLS on a non-80 port.
    automatic_https: { disable: true },
    // The TLS server of custom domains passes their requests here (domain-routes.ts): its X-Forwarded-* (the
    // domain, https) reach the app instead of being replaced by loopback's view.
    trusted_proxies: { source: 'static', ranges: ['127.0.0.1/32', '::1/128'] },
    routes: [fallbackRoute()],
  });
}

/** What list() reports for one of our routes: its config, and for a file route its files. */
export interface EdgeRoute {
  deploymentId: string;
  host: string;
  state: 'published' | 'stopped';
  upstreams: string[];
}

/** How one of our routes is made, read back from the router's config. */
export type RouteShape =
  { kind: 'proxy'; upstreams: string[] } | { kind: 'stopped' } | { kind: 'files'; dir: string; replicas: number };

interface RawHandler {
  handler?: string;
  upstreams?: { dial?: string }[];
  routes?: { match?: { file?: { root?: string } }[]; handle?: RawHandler[] }[];
}

interface RawRoute {
  '@id'?: unknown;
  match?: { host?: string[] }[];
  handle?: RawHandler[];
}

const dialsOf = (handler: RawHandler) => (handler.upstreams ?? []).flatMap((u) => (u.dial ? [u.dial] : []));

export function readRoute(raw: RawRoute): { deploymentId: string; host: string; shape: RouteShape } | undefined {
  const deploymentId = deploymentIdOf(raw['@id']);
  const host = raw.match?.[0]?.host?.[0];
  const handler = raw.handle?.[0];
  if (!deploymentId || !host || !handler) return undefined;
  if (handler.handler === 'reverse_proxy')
    return { deploymentId, host, shape: { kind: 'proxy', upstreams: dialsOf(handler) } };
  const first = handler.routes?.[0];
  const proxy = first?.handle?.[0];
  const dir = first?.match?.[0]?.file?.root;
  if (proxy?.handler === 'reverse_proxy' && dir) {
    return { deploymentId, host, shape: { kind: 'files', dir, replicas: dialsOf(proxy).length } };
  }
  return { deploymentId, host, shape: { kind: 'stopped' } };
}
