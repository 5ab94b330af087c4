import net from 'node:net';

import { challengeName } from './hostname';

export interface DnsRecordSpec {
  type: 'TXT' | 'CNAME' | 'A' | 'AAAA';
  name: string;
  value: string;
  purpose: 'ownership' | 'routing';
}

/**
 * The records a domain's owner creates: the TXT that proves ownership, and the routing to the edge router (a CNAME
 * to the deployment's stable host; or, where a CNAME cannot go, such as a zone's apex, A/AAAA to the router's public
 * addresses when the operator has set them).
 */
export function dnsRecordsFor(
  d: { hostname: string; token: string },
  stableHost: string,
  publicIps: readonly string[],
) {
  const records: DnsRecordSpec[] = [
    { type: 'TXT', name: challengeName(d.hostname), value: d.token, purpose: 'ownership' },
    { type: 'CNAME', name: d.hostname, value: stableHost, purpose: 'routing' },
  ];
  for (const ip of publicIps) {
    records.push({ type: net.isIPv6(ip) ? 'AAAA' : 'A', name: d.hostname, value: ip, purpose: 'routing' });
  }
  return records;
}
