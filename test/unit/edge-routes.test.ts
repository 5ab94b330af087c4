import {
  checkHost,
  checkUpstreams,
  checkUpstreamsDir,
  deploymentHost,
  deploymentIdOf,
  deploymentUrl,
  EdgeInputError,
  fallbackRoute,
  fileRoute,
  hostPort,
  nameLabel,
  proxyRoute,
  readRoute,
  routeId,
  serverConfig,
  shortId,
  stoppedRoute,
  upstreamFor,
} from '@shared/edge/routes';

describe('route ids', () => {
  it("names a deployment's route by its id and reads the id back", () => {
    expect(routeId('dep_1-A')).toBe('slipway-deployment-dep_1-A');
    expect(deploymentIdOf(routeId('dep_1-A'))).toBe('dep_1-A');
  });

  it.each([
    ['a path', '../x'],
    ['a slash', 'a/b'],
    ['a space', 'a b'],
    ['an empty id', ''],
    ['a leading dash', '-a'],
    ['101 characters', 'a'.repeat(101)],
  ])('refuses %s before it reaches the admin API', (_what, id) => {
    expect(() => routeId(id)).toThrow(EdgeInputError);
    expect(() => routeId(id)).toThrow('a deployment id is letters, digits, "-" or "_", at most 100 characters');
  });

  it('does not take a route of someone else (another prefix, no id at all) for one of ours', () => {
    expect(deploymentIdOf('slipway-edge-fallback')).toBeUndefined();
    expect(deploymentIdOf('other-app-route')).toBeUndefined();
    expect(deploymentIdOf(42)).toBeUndefined();
    expect(deploymentIdOf(undefined)).toBeUndefined();
  });
});

describe('host names', () => {
  it.each(['app-1234.localhost', 'a.b.c', 'x'])('accepts %s', (host) => {
    expect(checkHost(host)).toBe(host);
  });

  it.each([
    ['upper case', 'App.localhost'],
    ['an empty label', 'a..b'],
    ['a label starting with "-"', '-a.b'],
    ['a label ending with "-"', 'a-.b'],
    ['a 64-character label', `${'a'.repeat(64)}.b`],
    ['254 characters', `${'a.'.repeat(126)}ab`],
    ['a port', 'a.b:80'],
    ['a wildcard', '*.b'],
  ])('refuses %s', (_what, host) => {
    expect(() => checkHost(host)).toThrow(new EdgeInputError(`"${host}" is not a lower-case DNS host name`));
  });

  it.each([
    ['My App!', 'my-app'],
    ['  shop -- front  ', 'shop-front'],
    ['Café', 'cafe'],
    ['___', 'app'],
    ['', 'app'],
  ])('makes %j the DNS label %j', (name, label) => {
    expect(nameLabel(name)).toBe(label);
  });

  it('cuts a long name to leave room for the short id, never ending the label on "-"', () => {
    expect(nameLabel('a'.repeat(200))).toBe('a'.repeat(50));
    expect(nameLabel(`${'a'.repeat(49)} tail`)).toBe('a'.repeat(49));
  });

  it('keeps the first 12 letters and digits of the id, lower-cased, and refuses an id that is not one', () => {
    expect(shortId('AB_cd-123456789xyz')).toBe('abcd12345678');
    expect(shortId('a')).toBe('a');
    expect(() => shortId('a/b')).toThrow(EdgeInputError);
  });

  it("derives the deployment's host from its name, id and domain; the longest name still makes a valid host", () => {
    expect(deploymentHost('My App', 'Dep-0123456789abcdef', 'Localhost.')).toBe('my-app-dep012345678.localhost');
    const host = deploymentHost('n'.repeat(300), 'x'.repeat(100), 'localhost');
    expect(host.split('.')[0]).toHaveLength(63);
    expect(checkHost(host)).toBe(host);
    expect(() => deploymentHost('app', 'id1', 'bad domain')).toThrow(EdgeInputError);
  });

  it('leaves port 80 out of the URL and writes any other', () => {
    expect(deploymentUrl('web', 'd1', { domain: 'localhost', port: 80 })).toBe('http://web-d1.localhost');
    expect(deploymentUrl('web', 'd1', { domain: 'localhost', port: 8088 })).toBe('http://web-d1.localhost:8088');
  });
});

describe('upstreams', () => {
  it('writes IPv6 hosts in brackets', () => {
    expect(hostPort('::1', 80)).toBe('[::1]:80');
    expect(hostPort('127.0.0.1', 80)).toBe('127.0.0.1:80');
    expect(hostPort('engine.internal', 80)).toBe('engine.internal:80');
  });

  it('dials loopback for an unspecified bind address, the address itself otherwise, or the configured host', () => {
    expect(upstreamFor({ hostPort: 40001 }, '0.0.0.0')).toBe('127.0.0.1:40001');
    expect(upstreamFor({ hostPort: 40001 }, '::')).toBe('[::1]:40001');
    expect(upstreamFor({ hostPort: 40001 }, '10.0.0.5')).toBe('10.0.0.5:40001');
    expect(upstreamFor({ hostPort: 40001 }, '0.0.0.0', 'engine.internal')).toBe('engine.internal:40001');
  });

  it('refuses no upstream at all, or one that is not host:port, and drops duplicates', () => {
    expect(() => checkUpstreams([])).toThrow('publish needs at least one upstream; use showStopped instead');
    expect(() => checkUpstreams(['http://a:80'])).toThrow('upstream "http://a:80" is not host:port');
    expect(() => checkUpstreams(['a:80/x'])).toThrow(EdgeInputError);
    expect(() => checkUpstreams(['a'])).toThrow(EdgeInputError);
    expect(checkUpstreams(['a:1', '[::1]:2', 'a:1'])).toEqual(['a:1', '[::1]:2']);
  });
});

describe('Caddy routes', () => {
  it("sends the deployment's host round-robin to its replicas, retrying a failed dial on another", () => {
    const route = proxyRoute('d1', 'web-d1.localhost', ['127.0.0.1:1', '127.0.0.1:2', '127.0.0.1:3']);
    expect(route).toMatchObject({
      '@id': 'slipway-deployment-d1',
      match: [{ host: ['web-d1.localhost'] }],
      terminal: true,
      handle: [
        {
          handler: 'reverse_proxy',
          upstreams: [{ dial: '127.0.0.1:1' }, { dial: '127.0.0.1:2' }, { dial: '127.0.0.1:3' }],
          load_balancing: { selection_policy: { policy: 'round_robin' }, retries: 3 },
        },
      ],
    });
    // One replica still gets a second try (the dial may fail once while it restarts).
    expect(proxyRoute('d1', 'web-d1.localhost', ['127.0.0.1:1'])).toMatchObject({
      handle: [{ load_balancing: { retries: 2 } }],
    });
  });

  it('refuses a bad host or upstream rather than write it into the config', () => {
    expect(() => proxyRoute('d1', 'Web.localhost', ['127.0.0.1:1'])).toThrow(EdgeInputError);
    expect(() => proxyRoute('d1', 'web.localhost', [])).toThrow(EdgeInputError);
    expect(() => proxyRoute('../d1', 'web.localhost', ['127.0.0.1:1'])).toThrow(EdgeInputError);
    expect(() => stoppedRoute('d1', 'web.localhost/x')).toThrow(EdgeInputError);
  });

  it('answers a stopped deployment with 503, a page for browsers and text otherwise, naming the call to start it', () => {
    const route = stoppedRoute('d1', 'web-d1.localhost') as {
      handle: { routes: { match?: unknown[]; handle: { status_code: number; headers: object; body: string }[] }[] }[];
    };
    const [html, text] = route.handle[0]!.routes;
    expect(html!.match).toEqual([{ header: { Accept: ['*text/html*'] } }]);
    for (const page of [html!.handle[0]!, text!.handle[0]!]) {
      expect(page.status_code).toBe(503);
      expect(page.headers).toMatchObject({ 'Retry-After': ['60'], 'Cache-Control': ['no-store'] });
      expect(page.body).toContain('POST /platform/deployments/d1/start');
      expect(page.body).toContain('web-d1.localhost');
    }
    expect(html!.handle[0]!.headers).toMatchObject({ 'Content-Type': ['text/html; charset=utf-8'] });
    expect(text!.handle[0]!.headers).toMatchObject({ 'Content-Type': ['text/plain; charset=utf-8'] });
    expect(text!.match).toBeUndefined();
  });

  it('ends our server block with a 404 for hosts no deployment holds, without automatic HTTPS', () => {
    const server = serverConfig(['127.0.0.1:8088']) as { listen: string[]; routes: unknown[] };
    expect(server).toMatchObject({ listen: ['127.0.0.1:8088'], automatic_https: { disable: true } });
    expect(server.routes).toEqual([fallbackRoute()]);
    expect(fallbackRoute()).toMatchObject({
      '@id': 'slipway-edge-fallback',
      handle: [{ handler: 'static_response', status_code: 404 }],
    });
  });

  it('reads back what it wrote, and ignores routes that are not ours', () => {
    const upstreams = ['127.0.0.1:1', '[::1]:2'];
    const at = { deploymentId: 'd1', host: 'web-d1.localhost' };
    expect(readRoute(proxyRoute('d1', 'web-d1.localhost', upstreams))).toEqual({
      ...at,
      shape: { kind: 'proxy', upstreams },
    });
    expect(readRoute(stoppedRoute('d1', 'web-d1.localhost'))).toEqual({ ...at, shape: { kind: 'stopped' } });
    expect(readRoute(fileRoute('d1', 'web-d1.localhost', '/srv/up', 3))).toEqual({
      ...at,
      shape: { kind: 'files', dir: '/srv/up', replicas: 3 },
    });
    expect(readRoute(fallbackRoute())).toBeUndefined();
    expect(readRoute({ '@id': 'someone-else', match: [{ host: ['x.localhost'] }], handle: [{}] })).toBeUndefined();
    expect(readRoute({ '@id': 'slipway-deployment-d1', handle: [{ handler: 'reverse_proxy' }] })).toBeUndefined();
  });
});

describe('routes reading their upstreams from files', () => {
  type Proxy = { upstreams: { dial: string }[]; health_checks?: unknown; load_balancing: object };
  type FileRoute = {
    handle: {
      routes: { match?: { file?: object }[]; handle: (Proxy & { status_code?: number; body?: string })[] }[];
    }[];
  };

  it("dials each replica's file, proxying while replica 0 has one and answering the stopped page otherwise", () => {
    const [proxy, html, text] = (fileRoute('d1', 'web-d1.localhost', '/srv/up', 2) as FileRoute).handle[0]!.routes;

    expect(proxy!.match).toEqual([{ file: { root: '/srv/up', try_files: ['/d1/0'] } }]);
    expect(proxy!.handle[0]!.upstreams).toEqual([{ dial: '{file./srv/up/d1/0}' }, { dial: '{file./srv/up/d1/1}' }]);
    expect(proxy!.handle[0]!.load_balancing).toMatchObject({ selection_policy: { policy: 'round_robin' }, retries: 2 });
    for (const page of [html!.handle[0]!, text!.handle[0]!]) {
      expect(page.status_code).toBe(503);
      expect(page.body).toContain('POST /platform/deployments/d1/start');
    }
  });

  it('keeps no passive health for file upstreams, which Caddy would key by the file and not by the instance', () => {
    const [proxy] = (fileRoute('d1', 'web-d1.localhost', '/srv/up', 1) as FileRoute).handle[0]!.routes;
    expect(proxy!.handle[0]!.health_checks).toBeUndefined();
    expect(proxyRoute('d1', 'web-d1.localhost', ['127.0.0.1:1'])).toMatchObject({
      handle: [{ health_checks: { passive: { max_fails: 1 } } }],
    });
  });

  it('is the same route whatever the upstreams, so only a replica count changes the config', () => {
    expect(fileRoute('d1', 'web-d1.localhost', '/srv/up', 2)).toEqual(
      fileRoute('d1', 'web-d1.localhost', '/srv/up', 2),
    );
    expect(fileRoute('d1', 'web-d1.localhost', '/srv/up', 2)).not.toEqual(
      fileRoute('d1', 'web-d1.localhost', '/srv/up', 3),
    );
    expect(() => fileRoute('d1', 'web-d1.localhost', '/srv/up', 0)).toThrow(EdgeInputError);
  });

  it.each([
    ['a relative path', 'data/up'],
    ['a placeholder brace', '/srv/{up}'],
    ['a glob character', '/srv/up*'],
    ['a space', '/srv/my up'],
    ['a parent step', '/srv/../up'],
    ['the root', '/'],
  ])('refuses %s as the upstreams directory', (_what, dir) => {
    expect(() => checkUpstreamsDir(dir)).toThrow(EdgeInputError);
  });

  it('takes an absolute directory, without its trailing slash', () => {
    expect(checkUpstreamsDir('/var/lib/slipway/edge-upstreams/')).toBe('/var/lib/slipway/edge-upstreams');
  });
});
