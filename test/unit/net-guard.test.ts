import {
  isPrivateAddress,
  type LookupAll,
  OutboundTargetError,
  privateTargetReason,
  resolveTarget,
} from '../../shared/net-guard';

/** A resolver that answers from a table, as a DNS server under the attacker's control would. */
const fakeDns =
  (table: Record<string, string[]>): LookupAll =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

describe('outbound target guard', () => {
  it.each([
    ['loopback', '127.0.0.1'],
    ['private', '10.1.2.3'],
    ['private', '172.16.0.1'],
    ['private', '172.31.255.255'],
    ['private', '192.168.1.1'],
    ['metadata', '169.254.169.254'],
    ['CGNAT', '100.64.0.1'],
    ['unspecified', '0.0.0.0'],
    ['broadcast', '255.255.255.255'],
    ['multicast', '224.0.0.1'],
    ['reserved', '240.0.0.1'],
    ['IETF protocol assignments', '192.0.0.8'],
    ['benchmarking', '198.18.0.1'],
    ['documentation TEST-NET-1', '192.0.2.10'],
    ['documentation TEST-NET-2', '198.51.100.7'],
    ['documentation TEST-NET-3', '203.0.113.9'],
    ['IPv6 loopback', '::1'],
    ['IPv6 unspecified', '::'],
    ['IPv6 link-local', 'fe80::1'],
    ['IPv6 unique local', 'fd00::1'],
    ['IPv6 multicast', 'ff02::1'],
    ['IPv6 documentation', '2001:db8::1'],
    ['IPv6 site-local (deprecated)', 'fec0::1'],
    ['IPv6 discard', '100::1'],
    ['IPv4-mapped loopback, dotted', '::ffff:127.0.0.1'],
    ['IPv4-mapped loopback, hex', '::ffff:7f00:1'],
    ['IPv4-mapped metadata', '::ffff:a9fe:a9fe'],
    ['IPv4-mapped documentation', '::ffff:203.0.113.9'],
    ['IPv4-compatible loopback, dotted', '::127.0.0.1'],
    ['IPv4-compatible loopback, hex', '::7f00:1'],
    ['IPv4-compatible public (deprecated form)', '::8.8.8.8'],
    ['SIIT-translated loopback', '::ffff:0:7f00:1'],
    ['NAT64 loopback', '64:ff9b::7f00:1'],
    ['NAT64 metadata', '64:ff9b::169.254.169.254'],
    ['NAT64 local-use', '64:ff9b:1::a00:1'],
    ['6to4 embedding loopback', '2002:7f00:1::1'],
    ['6to4 embedding a private address', '2002:c0a8:101::1'],
    ['Teredo embedding loopback', '2001:0:4136:e378:8000:63bf:80ff:fffe'],
    ['IPv6 outside 2000::/3', '4000::1'],
    ['link-local with a zone', 'fe80::1%eth0'],
    ['not an address', 'localhost'],
  ])('refuses %s (%s)', (_what, address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])(
    'allows %s',
    (address) => {
      expect(isPrivateAddress(address)).toBe(false);
    },
  );

  it('refuses address literals in URLs in every spelling the URL parser accepts', async () => {
    for (const url of [
      'http://[::127.0.0.1]:8080/hook',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
      'http://[64:ff9b::7f00:1]/',
      'http://0x7f.1/',
      'http://2130706433/',
      'http://017700000001/',
      'https://203.0.113.9/',
      'https://192.0.2.1/',
      'https://198.51.100.1/',
    ]) {
      expect(await privateTargetReason(new URL(url))).toMatch(
        /resolves to .*special-purpose addresses cannot be called/,
      );
    }
    expect(await privateTargetReason(new URL('http://[::ffff:127.0.0.1]/'))).toMatch(
      /::ffff:7f00:1 \(127\.0\.0\.1\), a loopback/,
    );
    expect(await privateTargetReason(new URL('https://8.8.8.8/'))).toBeUndefined();
  });

  it('resolves names before judging them, and refuses a name when any of its addresses is special', async () => {
    expect(await privateTargetReason(new URL('http://localhost:8080/hook'))).toMatch(/resolves to (127\.0\.0\.1|::1)/);
    const lookup = fakeDns({ 'mixed.test': ['8.8.8.8', '10.0.0.5'], 'public.test': ['8.8.4.4'] });
    expect(await privateTargetReason(new URL('https://mixed.test/'), { lookup })).toMatch(
      /mixed\.test resolves to 10\.0\.0\.5, a private address/,
    );
    expect(await privateTargetReason(new URL('https://public.test/'), { lookup })).toBeUndefined();
    expect(await privateTargetReason(new URL('https://nowhere.test/'), { lookup })).toBe(
      'the host nowhere.test does not resolve',
    );
  });
});

describe('resolveTarget (resolve once, connect to what was checked)', () => {
  it('returns the checked address, the port and the host to name in Host and SNI', async () => {
    const lookup = fakeDns({ 'hooks.test': ['2606:4700:4700::1111', '8.8.8.8'] });
    await expect(resolveTarget(new URL('https://hooks.test/x'), { allowPrivate: false, lookup })).resolves.toEqual({
      host: 'hooks.test',
      port: 443,
      address: '2606:4700:4700::1111',
      family: 6,
    });
    await expect(resolveTarget(new URL('http://8.8.8.8:8080/'), { allowPrivate: false })).resolves.toEqual({
      host: '8.8.8.8',
      port: 8080,
      address: '8.8.8.8',
      family: 4,
    });
  });

  it('asks the resolver exactly once, so a rebinding name cannot answer differently to the connection', async () => {
    let calls = 0;
    const rebinding: LookupAll = async () => [{ address: calls++ === 0 ? '8.8.8.8' : '127.0.0.1', family: 4 }];
    const target = await resolveTarget(new URL('http://rebind.test/'), { allowPrivate: false, lookup: rebinding });
    expect(calls).toBe(1);
    expect(target.address).toBe('8.8.8.8');
  });

  it('throws a typed error saying why, unless private targets are allowed', async () => {
    const lookup = fakeDns({ 'inside.test': ['192.168.1.20'] });
    const refused = await resolveTarget(new URL('http://inside.test/'), { allowPrivate: false, lookup }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(OutboundTargetError);
    expect(refused).toMatchObject({ kind: 'special', message: expect.stringMatching(/192\.168\.1\.20, a private/) });
    await expect(resolveTarget(new URL('http://inside.test/'), { allowPrivate: true, lookup })).resolves.toMatchObject({
      address: '192.168.1.20',
      port: 80,
    });
    await expect(resolveTarget(new URL('http://gone.test/'), { allowPrivate: true, lookup })).rejects.toMatchObject({
      kind: 'unresolvable',
    });
    await expect(resolveTarget(new URL('ftp://8.8.8.8/'), { allowPrivate: false })).rejects.toMatchObject({
      kind: 'unsupported',
    });
  });
});
