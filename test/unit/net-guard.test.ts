import {
  isPrivateAddress,
  type LookupAll,
  OutboundTargetError,
  privateTargetReason,
  resolveTarget,
} from '@shared/net-guard';

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

describe('allowPrivate (the ALLOW_PRIVATE_* switches): this machine and private networks, never metadata', () => {
  it.each([
    ['loopback', '127.0.0.1'],
    ['IPv6 loopback', '::1'],
    ['IPv4-mapped loopback', '::ffff:127.0.0.1'],
    ['private', '10.1.2.3'],
    ['private', '172.17.0.1'],
    ['private', '192.168.1.20'],
    ['IPv6 unique local', 'fd12:3456::1'],
    ['CGNAT (overlay VPNs)', '100.64.0.1'],
  ])('opens %s (%s)', async (_what, address) => {
    const host = address.includes(':') ? `[${address}]` : address;
    await expect(resolveTarget(new URL(`http://${host}/`), { allowPrivate: true })).resolves.toMatchObject({
      port: 80,
    });
  });

  it.each([
    ['AWS, GCP, Azure, Oracle metadata (link-local)', '169.254.169.254'],
    ['AWS ECS task metadata (link-local)', '169.254.170.2'],
    ['Tencent metadata (link-local)', '169.254.0.23'],
    ['any link-local IPv4', '169.254.1.1'],
    ['IPv6 link-local', 'fe80::1'],
    ['AWS metadata over IPv6', 'fd00:ec2::254'],
    ['AWS DNS over IPv6', 'fd00:ec2::253'],
    ['GCP metadata over IPv6', 'fd20:ce::254'],
    ['Oracle metadata over IPv6', 'fd00:c1::a9fe:a9fe'],
    ['Alibaba metadata (inside CGNAT)', '100.100.100.200'],
    ['Azure WireServer (a public address)', '168.63.129.16'],
    ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
    ['IPv4-mapped metadata, hex', '::ffff:a9fe:a9fe'],
    ['NAT64 metadata', '64:ff9b::169.254.169.254'],
    ['6to4 embedding metadata', '2002:a9fe:a9fe::1'],
    ['SIIT-translated metadata', '::ffff:0:a9fe:a9fe'],
    ['IPv4-compatible metadata', '::169.254.169.254'],
    ['unspecified', '0.0.0.0'],
    ['multicast', '224.0.0.1'],
    ['broadcast', '255.255.255.255'],
  ])('keeps %s (%s) closed, saying so without pointing at the switch', async (_what, address) => {
    const host = address.includes(':') ? `[${address}]` : address;
    const err = await resolveTarget(new URL(`http://${host}/latest/meta-data/`), { allowPrivate: true }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OutboundTargetError);
    expect(err).toMatchObject({ kind: 'special', openable: false });
    expect(await privateTargetReason(new URL(`http://${host}/`), { allowPrivate: true })).toMatch(
      /special-purpose addresses cannot be called/,
    );
  });

  it('says why a metadata address stays closed, and points at the switch only where it would help', async () => {
    const metadata = await resolveTarget(new URL('http://169.254.169.254/'), { allowPrivate: false }).catch(
      (e: unknown) => e,
    );
    expect(metadata).toMatchObject({
      openable: false,
      message: expect.stringMatching(/link-local.*not even where private networks are allowed/),
    });
    const aws6 = await resolveTarget(new URL('http://[fd00:ec2::254]/'), { allowPrivate: true }).catch(
      (e: unknown) => e,
    );
    expect(aws6).toMatchObject({ message: expect.stringMatching(/fd00:ec2::254, the AWS instance metadata/) });
    const loopback = await resolveTarget(new URL('http://127.0.0.1/'), { allowPrivate: false }).catch(
      (e: unknown) => e,
    );
    expect(loopback).toMatchObject({ kind: 'special', openable: true });
  });

  it('refuses a name when any of its addresses is metadata, even among private ones', async () => {
    const lookup = fakeDns({
      'dev.test': ['10.0.0.5', '169.254.169.254'],
      'ok.test': ['10.0.0.5', '127.0.0.1'],
      'alibaba.test': ['100.100.100.200'],
    });
    await expect(resolveTarget(new URL('http://dev.test/'), { allowPrivate: true, lookup })).rejects.toMatchObject({
      message: expect.stringMatching(/169\.254\.169\.254/),
    });
    await expect(resolveTarget(new URL('http://alibaba.test/'), { allowPrivate: true, lookup })).rejects.toMatchObject({
      message: expect.stringMatching(/Alibaba Cloud metadata/),
    });
    await expect(resolveTarget(new URL('http://ok.test/'), { allowPrivate: true, lookup })).resolves.toMatchObject({
      address: '10.0.0.5',
    });
  });

  it('leaves a name it cannot resolve to whoever connects, where private networks are allowed', async () => {
    const lookup = fakeDns({});
    expect(await privateTargetReason(new URL('https://registry.internal/'), { allowPrivate: true, lookup })).toBe(
      undefined,
    );
    expect(await privateTargetReason(new URL('https://registry.internal/'), { lookup })).toBe(
      'the host registry.internal does not resolve',
    );
  });
});
