import dns from 'node:dns';
import type { LookupFunction } from 'node:net';

/**
 * Deployments' URLs are `<name>-<id>.localhost`, which is loopback (RFC 6761): browsers and curl resolve it
 * themselves, but Node asks glibc, and glibc without nss-myhostname does not know it. A client of the edge router
 * (tests, benchmarks) connects such names to 127.0.0.1 and keeps the name as its Host.
 */
export const localhostLookup = ((hostname, options, callback) => {
  if (hostname !== 'localhost' && !hostname.endsWith('.localhost')) return dns.lookup(hostname, options, callback);
  if (options.all) callback(null, [{ address: '127.0.0.1', family: 4 }]);
  else (callback as (err: null, address: string, family: number) => void)(null, '127.0.0.1', 4);
}) as LookupFunction;
