import type { LookupAddress } from 'node:dns';

import { localhostLookup } from '@shared/localhost-lookup';

const lookupOne = (host: string) =>
  new Promise<{ address: string; family: number }>((resolve, reject) =>
    localhostLookup(host, {}, (err, address, family) =>
      err ? reject(err) : resolve({ address: address as string, family: family! }),
    ),
  );
const lookupAll = (host: string) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    localhostLookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses as never))),
  );

describe('localhost lookup', () => {
  it.each(['localhost', 'web-abc123.localhost', 'a.b.localhost'])('connects %s to IPv4 loopback', async (host) => {
    expect(await lookupOne(host)).toEqual({ address: '127.0.0.1', family: 4 });
    expect(await lookupAll(host)).toEqual([{ address: '127.0.0.1', family: 4 }]);
  });

  it('hands every other name to the system resolver', async () => {
    // Address literals resolve without a DNS server: what comes back is the system's answer, not ours.
    expect(await lookupOne('10.9.8.7')).toEqual({ address: '10.9.8.7', family: 4 });
    expect(await lookupAll('::2')).toEqual([{ address: '::2', family: 6 }]);
  });
});
