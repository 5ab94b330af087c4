import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * An HTTP double of a cloud's REST API that replays exchanges recorded from the cloud's official API reference
 * (test/fixtures/cloud/<cloud>/*.json, each naming its source). The SDK under test talks to it as to the cloud: the
 * adapter is real, the SDK is real, only the far end is a recording.
 *
 * A scenario is an ordered list of exchanges. Each request must match the next exchange (method, path, and the
 * query keys it names); an exchange marked `repeat` (a long-running operation polled until done) answers every
 * matching request until one matches the exchange after it. A request that matches nothing is answered 501 with what
 * was expected, and recorded as a mismatch, so a test fails on it with the reason rather than on a timeout.
 *
 * Paths and bodies may hold `{{name}}` placeholders: `{name}` segments in a fixture's path capture from the request,
 * and `vars` given to the server fill the rest (project, region, a host name the test chose); a `{{name}}` in a path
 * that no var fills yet is captured like `{name}`, once.
 */
export interface Exchange {
  name: string;
  request: { method: string; path: string; query?: Record<string, string> };
  response: { status: number; headers?: Record<string, string>; body?: unknown };
  repeat?: boolean;
}

export interface FixtureFile {
  /** The API reference page(s) the exchanges were written from. */
  source: string | string[];
  exchanges: Exchange[];
}

export interface Received {
  exchange: string;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'cloud');

/** The exchanges of fixture files (`<cloud>/<file>.json`), concatenated in the order given. */
export function loadScenario(...files: string[]): Exchange[] {
  return files.flatMap((f) => {
    const fixture = JSON.parse(fs.readFileSync(path.join(FIXTURES, f), 'utf8')) as FixtureFile;
    if (!fixture.source || !fixture.source.length) throw new Error(`${f} names no source`);
    return fixture.exchanges;
  });
}

function fill(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (m, k: string) => vars[k] ?? m);
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  return value;
}

/** Captures `{name}` segments of `pattern` from `actual`, or null when the path does not match. */
function matchPath(pattern: string, actual: string, vars: Record<string, string>): Record<string, string> | null {
  const names: string[] = [];
  // A `{{name}}` no var fills yet captures it from the first request that names it (an ID the test cannot know
  // beforehand, such as the service of a deployment the api just created), and later requests must repeat it.
  const source = (fill(pattern, vars) as string)
    .replace(/\{\{(\w+)\}\}/g, '{$1}')
    .split(/(\{\w+\})/)
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (!m) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1]!);
      return '([^/]+)';
    })
    .join('');
  const m = new RegExp(`^${source}$`).exec(actual);
  if (!m) return null;
  return Object.fromEntries(names.map((n, i) => [n, decodeURIComponent(m[i + 1]!)]));
}

export interface ReplayOptions {
  /** Serve HTTPS with this key and certificate (SDKs that refuse a bearer token over plain HTTP). */
  tls?: { key: string | Buffer; cert: string | Buffer };
  vars?: Record<string, string>;
}

export async function startReplay(exchanges: Exchange[], opts: ReplayOptions = {}) {
  const vars: Record<string, string> = { ...(opts.vars ?? {}) };
  const received: Received[] = [];
  const mismatches: string[] = [];
  let next = 0;

  const matches = (x: Exchange | undefined, method: string, pathname: string, query: Record<string, string>) => {
    if (!x || x.request.method.toUpperCase() !== method) return null;
    const captured = matchPath(x.request.path, pathname, vars);
    if (!captured) return null;
    for (const [k, v] of Object.entries(x.request.query ?? {}))
      if (query[k] !== fill(v, { ...vars, ...captured })) return null;
    return captured;
  };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://replay');
      const query = Object.fromEntries(url.searchParams);
      const method = (req.method ?? 'GET').toUpperCase();
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        // A form (an OAuth token request) or plain text: kept as the string it is.
      }
      // A repeating exchange gives way as soon as the one after it matches.
      let at = next;
      let captured = matches(exchanges[at], method, url.pathname, query);
      if (exchanges[at]?.repeat) {
        const after = matches(exchanges[at + 1], method, url.pathname, query);
        if (after) [at, captured] = [at + 1, after];
      }
      const x = exchanges[at];
      if (!x || !captured) {
        const expected = x ? `${x.name}: ${x.request.method} ${fill(x.request.path, vars) as string}` : 'nothing more';
        mismatches.push(`${method} ${url.pathname} while expecting ${expected}`);
        res.writeHead(501, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: { code: 501, message: `replay: unexpected ${method} ${url.pathname}; expected ${expected}` },
          }),
        );
        return;
      }
      next = x.repeat ? at : at + 1;
      Object.assign(vars, captured);
      received.push({ exchange: x.name, method, path: url.pathname, query, headers: req.headers, body });
      const payload = x.response.body === undefined ? '' : JSON.stringify(fill(x.response.body, vars));
      res.writeHead(x.response.status, {
        ...(payload ? { 'content-type': 'application/json' } : {}),
        ...((fill(x.response.headers ?? {}, vars) as Record<string, string>) ?? {}),
      });
      res.end(payload);
    });
  };

  const server = opts.tls ? https.createServer(opts.tls, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  vars.origin = origin;

  return {
    origin,
    port,
    vars,
    received,
    mismatches,
    /** The names of the exchanges not yet served (a repeating one counts as served once it answered). */
    pending: () =>
      exchanges
        .slice(next)
        .filter((x, i) => !(i === 0 && x.repeat && received.at(-1)?.exchange === x.name))
        .map((x) => x.name),
    /** The requests served by the named exchange. */
    requestsOf: (name: string) => received.filter((r) => r.exchange === name),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
export type Replay = Awaited<ReturnType<typeof startReplay>>;

/**
 * A throwaway key and self-signed certificate for 127.0.0.1 (openssl), for `tls`: the SDK under test trusts `cert` as
 * its only CA through the adapter's test-only client options, so nothing else about TLS is relaxed.
 */
export function selfSignedTls(): { key: string; cert: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-tls-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'].concat([
        '-addext',
        'subjectAltName=IP:127.0.0.1',
        '-keyout',
        'key.pem',
        '-out',
        'cert.pem',
      ]),
      { cwd: dir, stdio: 'ignore' },
    );
    return {
      key: fs.readFileSync(path.join(dir, 'key.pem'), 'utf8'),
      cert: fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
