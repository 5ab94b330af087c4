import Docker from 'dockerode';

/**
 * A request the engine client refused to send, or an answer it refused to follow. Carries no engine text, so
 * callers may show its message.
 */
export class EngineRequestRefused extends Error {
  override name = 'EngineRequestRefused';
}

/**
 * One path segment of the Engine API as dockerode builds it: a name, ID, reference (`repo/name:tag@sha256:…`, a
 * registry `[::1]:5000`) or verb. Anything else (dot segments, `?`, `#`, `%`, spaces) would address another
 * endpoint than the one called.
 */
const SEGMENT = /^[A-Za-z0-9_.:@[\]-]+$/;

/** Why `path` (dockerode's template with the caller's names filled in) must not be sent, or undefined. */
export function unsafeEnginePath(path: string): string | undefined {
  // dockerode marks "a query string follows" with one trailing `?`; the query itself is encoded by the modem.
  const bare = path.endsWith('?') ? path.slice(0, -1) : path;
  if (!bare.startsWith('/')) return 'the request path is not absolute';
  const segments = bare.slice(1).split('/');
  for (const s of segments) {
    if (s === '.' || s === '..') return 'a name contains a "." or ".." path segment';
    if (!SEGMENT.test(s)) return 'a name contains characters outside [A-Za-z0-9_.:@[]-] or an empty path segment';
  }
  return undefined;
}

interface ModemInternals {
  dial(options: { path: string }, callback: (err: unknown, data?: unknown) => void): unknown;
  buildRequest(
    options: Record<string, unknown>,
    context: unknown,
    data: unknown,
    callback: (err: unknown, data?: unknown) => void,
  ): unknown;
}

/**
 * dockerode concatenates names into URL paths unescaped, and docker-modem follows HTTP redirects like a browser.
 * The engine answers a path with `..` in it by a redirect to the cleaned path, so an image named
 * `../../../etc/passwd` made the modem open a second connection to a host named `etc` (over TCP, from the
 * worker): a blind SSRF, and that second request has no error listener, so its failure killed the process.
 * The Engine API never redirects a canonical path, so: refuse non-canonical paths before sending, and never
 * follow a redirect (`maxRedirects: 0` is the modem's own switch: the 3xx then fails the call that made it).
 */
function guard(docker: Docker): Docker {
  const modem = docker.modem as unknown as ModemInternals;
  const dial = modem.dial.bind(modem);
  modem.dial = (options, callback) => {
    const reason = typeof options.path === 'string' ? unsafeEnginePath(options.path) : 'no request path';
    if (reason) {
      process.nextTick(() => callback(new EngineRequestRefused(`refused to call the container engine: ${reason}`)));
      return undefined;
    }
    return dial(options, callback);
  };
  const buildRequest = modem.buildRequest.bind(modem);
  modem.buildRequest = (options, context, data, callback) => {
    let called = false;
    return buildRequest({ ...options, maxRedirects: 0 }, context, data, (err, result) => {
      if (called) return;
      called = true;
      if (err instanceof Error && /redirect/i.test(err.message) && !(err as { statusCode?: number }).statusCode)
        callback(new EngineRequestRefused('the container engine answered with a redirect, which is never followed'));
      else callback(err, result);
    });
  };
  return docker;
}

/** A Docker Engine API client for DOCKER_HOST (unix:// or tcp://), or the default socket; see `guard`. */
export function createDockerClient(dockerHost?: string): Docker {
  if (!dockerHost) return guard(new Docker({ socketPath: '/var/run/docker.sock' }));
  const url = new URL(dockerHost);
  if (url.protocol === 'unix:') return guard(new Docker({ socketPath: url.pathname }));
  return guard(
    new Docker({
      host: url.hostname,
      port: Number(url.port || 2375),
      protocol: url.protocol === 'https:' ? 'https' : 'http',
    }),
  );
}
