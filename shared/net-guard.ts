import { lookup } from 'node:dns/promises';
import net from 'node:net';

const blocked = new net.BlockList();
// Loopback, private, link-local (cloud metadata lives at 169.254.169.254), CGNAT, unspecified, multicast, reserved.
for (const [addr, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 3],
] as const) {
  blocked.addSubnet(addr, prefix, 'ipv4');
}
for (const [addr, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
  ['64:ff9b::', 96],
  ['2001:db8::', 32],
] as const) {
  blocked.addSubnet(addr, prefix, 'ipv6');
}

/** True for addresses no outbound request of ours may reach: loopback, private, link-local, metadata, and their IPv4-mapped forms. */
export function isPrivateAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped =
    /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address) ?? /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (mapped) {
    const v4 =
      mapped.length === 2
        ? mapped[1]!
        : [
            parseInt(mapped[1]!, 16) >> 8,
            parseInt(mapped[1]!, 16) & 255,
            parseInt(mapped[2]!, 16) >> 8,
            parseInt(mapped[2]!, 16) & 255,
          ].join('.');
    return blocked.check(v4, 'ipv4');
  }
  return blocked.check(address, 'ipv6');
}

/**
 * Resolves a URL's host and refuses it when any address it resolves to is private (a DNS name can hide a
 * private address). Returns the reason, or undefined when the URL may be called.
 */
export async function privateTargetReason(url: URL): Promise<string | undefined> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  try {
    addresses = net.isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    return `the host ${host} does not resolve`;
  }
  const bad = addresses.find(isPrivateAddress);
  return bad ? `the host ${host} resolves to ${bad}, a loopback, private, link-local or metadata address` : undefined;
}
