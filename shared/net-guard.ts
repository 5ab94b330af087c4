import { lookup } from 'node:dns/promises';
import net from 'node:net';

import ipaddr from 'ipaddr.js';

/**
 * The outbound guard for requests a tenant aims (webhooks, Git): only plain public unicast addresses may be
 * reached. The ranges come from ipaddr.js's registry of special-purpose blocks (maintained upstream), not a hand
 * list; anything it does not call `unicast` is refused, whatever the reason it is special.
 */

/** How a caller resolves a name: every address, in the resolver's order. Injected by tests (DNS rebinding). */
export type LookupAll = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemLookup: LookupAll = (host) => lookup(host, { all: true, verbatim: true });

const RANGE_WORDS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  linkLocal: 'link-local (cloud metadata lives there)',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  uniqueLocal: 'private (unique local)',
  reserved: 'reserved or documentation',
  ipv4Compatible: 'IPv4-compatible IPv6',
  nonGlobal: 'non-global IPv6',
};

// Global unicast IPv6 is allocated from 2000::/3 only; everything else (including the deprecated IPv4-compatible
// ::a.b.c.d form, which ipaddr.js calls `unicast`) is either special or unassigned.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * ipaddr.js reads any IPv6 address written with a dotted tail as IPv4-mapped (`::8.8.8.8` comes back as
 * `::ffff:808:808`), which would judge the deprecated IPv4-compatible form by its IPv4 half. Rewriting the tail as
 * two hex groups first keeps the address the kernel would actually connect to.
 */
function hexTail(address: string): string {
  const m = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)(%.*)?$/.exec(address);
  if (!m) return address;
  const [a, b, c, d] = m.slice(2, 6).map(Number) as [number, number, number, number];
  return `${m[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}${m[6] ?? ''}`;
}

/**
 * The special-purpose range an address belongs to, or undefined for a plain public unicast address.
 * IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is judged by the IPv4 address it carries; every other form that embeds an
 * IPv4 address (NAT64 `64:ff9b::/96`, 6to4, Teredo, SIIT) is refused whole, since where it lands depends on
 * translators we do not see.
 */
export function specialRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid';
  let parsed = ipaddr.parse(hexTail(address));
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress())
    parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const range = parsed.range();
  if (range !== 'unicast') return range;
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    if (v6.parts.slice(0, 6).every((p) => p === 0)) return 'ipv4Compatible';
    if (!v6.match(GLOBAL_UNICAST_V6)) return 'nonGlobal';
  }
  return undefined;
}

/** True for every address no outbound request of ours may reach (anything but public unicast). */
export function isPrivateAddress(address: string): boolean {
  return specialRange(address) !== undefined;
}

/** Why an outbound target was refused; `kind` lets a caller classify it (a DNS failure is not an attack). */
export class OutboundTargetError extends Error {
  override name = 'OutboundTargetError';
  constructor(
    readonly kind: 'unresolvable' | 'special' | 'unsupported',
    /** A phrase fit for a client: what was wrong, without a trailing period. */
    readonly reason: string,
  ) {
    super(reason);
  }
}

export interface ResolvedTarget {
  /** The URL's host as written (brackets removed): the Host header and TLS server name. */
  host: string;
  port: number;
  /** The checked address the caller must connect to; resolving again would reopen DNS rebinding. */
  address: string;
  family: 4 | 6;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'ssh:': 22, 'git:': 9418 };

function describe(host: string, address: string): string {
  const range = specialRange(address)!;
  const words = RANGE_WORDS[range] ?? 'special-purpose';
  const parsed = ipaddr.isValid(address) ? ipaddr.parse(hexTail(address)) : undefined;
  const mapped =
    parsed?.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
      ? ` (${(parsed as ipaddr.IPv6).toIPv4Address().toString()})`
      : '';
  const shown = `${parsed?.toString() ?? address}${mapped}`;
  return `the host ${host} resolves to ${shown}, a ${words} address; loopback, private, link-local, metadata and other special-purpose addresses cannot be called`;
}

/**
 * Resolves a URL's host once and returns the address to connect to. Refused when any address the name resolves
 * to is special-purpose (a name can hide one among public ones), unless `allowPrivate` (tests, private setups).
 */
export async function resolveTarget(
  url: URL,
  opts: { allowPrivate: boolean; lookup?: LookupAll },
): Promise<ResolvedTarget> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : DEFAULT_PORTS[url.protocol];
  if (port === undefined) throw new OutboundTargetError('unsupported', `the scheme ${url.protocol} is not supported`);
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await (opts.lookup ?? systemLookup)(host);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) throw new OutboundTargetError('unresolvable', `the host ${host} does not resolve`);
  }
  if (!opts.allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) throw new OutboundTargetError('special', describe(host, bad.address));
  }
  const chosen = addresses[0]!;
  return { host, port, address: chosen.address, family: net.isIP(chosen.address) === 6 ? 6 : 4 };
}

/**
 * Resolves a URL's host and refuses it when any address it resolves to is special-purpose. Returns the reason, or
 * undefined when the URL may be called. A check before the fact only: whoever connects must pin with resolveTarget.
 */
export async function privateTargetReason(url: URL, opts: { lookup?: LookupAll } = {}): Promise<string | undefined> {
  try {
    await resolveTarget(url, { allowPrivate: false, lookup: opts.lookup });
    return undefined;
  } catch (err) {
    if (err instanceof OutboundTargetError) return err.reason;
    throw err;
  }
}
