import {
  domainRoute,
  httpDialOf,
  pkiApp,
  readDomainRoute,
  tlsAutomation,
  tlsFallbackRoute,
  tlsServerConfig,
} from '@shared/edge/domain-routes';
import { EdgeInputError, serverConfig } from '@shared/edge/routes';

describe('custom domains on the edge router', () => {
  it('routes a domain to the HTTP server with the deployment’s stable host, and nothing of its releases', () => {
    const route = domainRoute('dom-1', 'www.example.com', 'web-abc.localhost', '127.0.0.1:8088');
    expect(route).toEqual({
      '@id': 'slipway-domain-dom-1',
      match: [{ host: ['www.example.com'] }],
      handle: [
        {
          handler: 'reverse_proxy',
          upstreams: [{ dial: '127.0.0.1:8088' }],
          headers: { request: { set: { Host: ['web-abc.localhost'] } } },
          stream_close_delay: '10m',
        },
      ],
      terminal: true,
    });
    expect(readDomainRoute(route as Parameters<typeof readDomainRoute>[0])).toEqual({
      domainId: 'dom-1',
      hostname: 'www.example.com',
      stableHost: 'web-abc.localhost',
    });
    // Another of the router's routes is not a domain's.
    expect(readDomainRoute(tlsFallbackRoute() as Parameters<typeof readDomainRoute>[0])).toBeUndefined();
  });

  it('refuses ids and hosts that would reach the admin API’s paths or a matcher unchecked', () => {
    expect(() => domainRoute('../x', 'www.example.com', 'a.localhost', '127.0.0.1:1')).toThrow(EdgeInputError);
    expect(() => domainRoute('d', 'WWW.example.com', 'a.localhost', '127.0.0.1:1')).toThrow(EdgeInputError);
    expect(() => domainRoute('d', '*.example.com', 'a.localhost', '127.0.0.1:1')).toThrow(EdgeInputError);
  });

  it('dials the HTTP listener on loopback when it listens on every address', () => {
    expect(httpDialOf('0.0.0.0:8088')).toBe('127.0.0.1:8088');
    expect(httpDialOf('[::]:8088')).toBe('[::1]:8088');
    expect(httpDialOf('127.0.0.1:80')).toBe('127.0.0.1:80');
    expect(() => httpDialOf('nonsense')).toThrow(EdgeInputError);
  });

  it('serves TLS on its own server, without redirects, certificates from the configured issuer', () => {
    expect(tlsServerConfig(['127.0.0.1:8443'])).toEqual({
      listen: ['127.0.0.1:8443'],
      tls_connection_policies: [{}],
      automatic_https: { disable_redirects: true },
      routes: [tlsFallbackRoute()],
    });
    expect(tlsAutomation({ issuer: 'internal' })).toEqual({
      policies: [{ issuers: [{ module: 'internal', ca: 'local' }] }],
    });
    expect(tlsAutomation({ issuer: 'acme', acmeEmail: 'ops@example.com' })).toEqual({
      policies: [{ issuers: [{ module: 'acme', email: 'ops@example.com' }] }],
    });
    expect(pkiApp()).toEqual({ certificate_authorities: { local: { install_trust: false } } });
    // The HTTP server trusts loopback's X-Forwarded-* only: the TLS server's hop.
    expect(serverConfig(['127.0.0.1:8088'])).toMatchObject({
      trusted_proxies: { source: 'static', ranges: ['127.0.0.1/32', '::1/128'] },
    });
  });
});
