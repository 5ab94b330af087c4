import net from 'node:net';

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
 * One deployment's route: its host, round-robin over its replicas. Passive health takes an instance that failed
 * out of rotation for a while, and a failed dial is retried on the next one, so a dead replica costs no request.
 */
export function proxyRoute(deploymentId: string, host: string, upstreams: string[]) {
  return json({
    '@id': routeId(deploymentId),
    match: [{ host: [checkHost(host)] }],
    handle: [
      {
        handler: 'reverse_proxy',
        upstreams: checkUpstreams(upstreams).map((dial) => ({ dial })),
        load_balancing: {
          selection_policy: { policy: 'round_robin' },
          retries: Math.max(2, upstreams.length),
          try_interval: '100ms',
        },
        health_checks: { passive: { fail_duration: '10s', max_fails: 1 } },
        // Every admin change reloads the whole config; without a delay, each one would cut every open WebSocket
        // of every deployment at once.
        stream_close_delay: '10m',
      },
    ],
    terminal: true,
  });
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const NO_STORE = { 'Cache-Control': ['no-store'], 'X-Content-Type-Options': ['nosniff'] };

/** The call that brings the deployment back, with its own ID: the owner copies it as it stands. */
const startCall = (deploymentId: string) => `POST /platform/deployments/${deploymentId}/start`;

function stoppedText(deploymentId: string, host: string): string {
  return (
    `The deployment at ${host} is stopped, so nothing answers here for now.\n` +
    `If it is yours, start it again: ${startCall(deploymentId)} on your Slipway api ` +
    '(or redeploy it); this address stays the same.\n'
  );
}

function stoppedHtml(deploymentId: string, host: string): string {
  const h = escapeHtml(host);
  return (
    '<!doctype html><html><head><meta charset="utf-8"><title>Deployment stopped</title></head>' +
    `<body><h1>This deployment is stopped</h1><p>The deployment at <b>${h}</b> is stopped, so nothing answers ` +
    `here for now.</p><p>If it is yours, start it again (<code>${escapeHtml(startCall(deploymentId))}</code> on ` +
    'your Slipway api, or redeploy it); this address stays the same.</p></body></html>\n'
  );
}

/** A stopped deployment's route: the router itself answers 503, as a page for browsers and as text otherwise. */
export function stoppedRoute(deploymentId: string, host: string) {
  const page = (type: string, body: string) => ({
    handler: 'static_response',
    status_code: 503,
    headers: { 'Content-Type': [type], 'Retry-After': ['60'], ...NO_STORE },
    body,
  });
  return json({
    '@id': routeId(deploymentId),
    match: [{ host: [checkHost(host)] }],
    handle: [
      {
        handler: 'subroute',
        routes: [
          {
            match: [{ header: { Accept: ['*text/html*'] } }],
            handle: [page('text/html; charset=utf-8', stoppedHtml(deploymentId, host))],
            terminal: true,
          },
          { handle: [page('text/plain; charset=utf-8', stoppedText(deploymentId, host))], terminal: true },
        ],
      },
    ],
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

/** Our server block: plain HTTP on the listen addresses (TLS is for custom domains, §16), fallback last. */
export function serverConfig(listen: string[]) {
  return json({
    listen,
    // Host matchers would otherwise make Caddy fetch certificates and serve TLS on a non-80 port.
    automatic_https: { disable: true },
    routes: [fallbackRoute()],
  });
}

/** What list() reports for one of our routes, read back from the router's config. */
export interface EdgeRoute {
  deploymentId: string;
  host: string;
  state: 'published' | 'stopped';
  upstreams: string[];
}

interface RawRoute {
  '@id'?: unknown;
  match?: { host?: string[] }[];
  handle?: { handler?: string; upstreams?: { dial?: string }[] }[];
}

export function readRoute(raw: RawRoute): EdgeRoute | undefined {
  const deploymentId = deploymentIdOf(raw['@id']);
  const host = raw.match?.[0]?.host?.[0];
  const handler = raw.handle?.[0];
  if (!deploymentId || !host || !handler) return undefined;
  const proxy = handler.handler === 'reverse_proxy';
  return {
    deploymentId,
    host,
    state: proxy ? 'published' : 'stopped',
    upstreams: proxy ? (handler.upstreams ?? []).flatMap((u) => (u.dial ? [u.dial] : [])) : [],
  };
}
