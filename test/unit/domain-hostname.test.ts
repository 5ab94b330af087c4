import { challengeName, HostnameError, normalizeHostname } from '@shared/domains/hostname';
import { dnsRecordsFor } from '@shared/domains/records';

const at = { edgeDomain: 'apps.example.net' };
const refused = (input: string) => {
  try {
    normalizeHostname(input, at);
  } catch (err) {
    expect(err).toBeInstanceOf(HostnameError);
    return (err as Error).message;
  }
  throw new Error(`${input} was accepted`);
};

describe('a custom domain host name', () => {
  it('is lower-cased, loses a final dot and is converted to punycode', () => {
    expect(normalizeHostname('WWW.Example.COM.', at)).toBe('www.example.com');
    expect(normalizeHostname('  shop.example.com ', at)).toBe('shop.example.com');
    expect(normalizeHostname('bücher.example', at)).toBe('xn--bcher-kva.example');
    expect(normalizeHostname('xn--bcher-kva.example', at)).toBe('xn--bcher-kva.example');
  });

  it('refuses wildcards, IP literals, single labels and what is not a bare host, saying why', () => {
    expect(refused('*.example.com')).toMatch(/wildcard/);
    expect(refused('www.*.example.com')).toMatch(/wildcard/);
    expect(refused('192.0.2.1')).toMatch(/IP address/);
    expect(refused('[2001:db8::1]')).toMatch(/IP address/);
    expect(refused('2001:db8::1')).toMatch(/IP address/);
    expect(refused('example')).toMatch(/single label/);
    expect(refused('https://www.example.com/')).toMatch(/without scheme, port or path/);
    expect(refused('www.example.com:443')).toMatch(/without scheme, port or path/);
    expect(refused('')).toMatch(/empty/);
    expect(refused('-bad.example.com')).toMatch(/label "-bad"/);
    expect(refused('a..example.com')).toMatch(/label ""/);
    expect(refused(`${'a'.repeat(64)}.example.com`)).toMatch(/1 to 63/);
    expect(refused(`${'a.'.repeat(127)}com`)).toMatch(/253/);
    expect(refused('www.example.123')).toMatch(/numeric|IDNA/);
    expect(refused('under_score.example.com')).toMatch(/label|IDNA/);
  });

  it('refuses a public suffix alone, the service’s own domain and localhost', () => {
    expect(refused('co.uk')).toMatch(/public suffix/);
    expect(refused('github.io')).toMatch(/public suffix/);
    expect(normalizeHostname('shop.example.co.uk', at)).toBe('shop.example.co.uk');
    expect(refused('apps.example.net')).toMatch(/under apps\.example\.net/);
    expect(refused('web-123.apps.example.net')).toMatch(/under apps\.example\.net/);
    expect(refused('app.localhost')).toMatch(/under localhost/);
    // A name that merely ends in the same letters is not under it.
    expect(normalizeHostname('myapps.example.net', at)).toBe('myapps.example.net');
  });
});

describe('the records a domain asks for', () => {
  it('is the ownership TXT and a CNAME to the stable host, plus A/AAAA when the router has public addresses', () => {
    const d = { hostname: 'www.example.com', token: 'slipway-verify=abc' };
    expect(challengeName(d.hostname)).toBe('_slipway-challenge.www.example.com');
    expect(dnsRecordsFor(d, 'web-1234.apps.example.net', [])).toEqual([
      { type: 'TXT', name: '_slipway-challenge.www.example.com', value: 'slipway-verify=abc', purpose: 'ownership' },
      { type: 'CNAME', name: 'www.example.com', value: 'web-1234.apps.example.net', purpose: 'routing' },
    ]);
    expect(dnsRecordsFor(d, 'web-1234.apps.example.net', ['203.0.113.7', '2001:db8::7']).slice(2)).toEqual([
      { type: 'A', name: 'www.example.com', value: '203.0.113.7', purpose: 'routing' },
      { type: 'AAAA', name: 'www.example.com', value: '2001:db8::7', purpose: 'routing' },
    ]);
  });
});
