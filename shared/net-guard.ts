import { lookup } from 'node:dns/promises';
import net from 'node:net';

import ipaddr from 'ipaddr.js';

/**
 * The outbound guard for requests a tenant aims (webhooks, Git, registries, AI providers): only plain public unicast
 * addresses may be reached. The ranges come from ipaddr.js's registry of special-purpose blocks (maintained
 * upstream), not a hand list; anything it does not call `unicast` is refused, whatever the reason it is special.
 * The ALLOW_PRIVATE_* switches open this machine and private networks for development (`allowPrivate`), nothing
 * more: link-local and cloud metadata addresses stay closed whatever they say.
 */

/** How a caller resolves a name: every address, in the resolver's order. Injected by tests (DNS rebinding). */
export type LookupAll = (host: string) => Promise<{ address: string; family: number }[]>;

export const systemLookup: LookupAll = (host) => lookup(host, { all: true, verbatim: true });

const RANGE_WORDS: Record<string, string> = {
  unspecified: 'unspecified',
  broadcast: 'broadcast',
  multicast: 'multicast',
  loopback: 'loopback',
  carrierGradeNat: 'carrier-grade NAT',
  private: 'private',
  uniqueLocal: 'private (unique local)',
  reserved: 'reserved or documentation',
  ipv4Compatible: 'IPv4-compatible IPv6',
  nonGlobal: 'non-global IPv6',
};

/** What `allowPrivate` opens: this machine and private networks (CGNAT included: overlay VPNs such as Tailscale). */
const OPENABLE_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'carrierGradeNat']);

/**
 * Cloud metadata services outside link-local, closed like link-local itself (where AWS, GCP, Azure, Oracle and
 * DigitalOcean answer at 169.254.169.254, ECS at 169.254.170.2, Tencent at 169.254.0.23) whatever a switch says:
 * they hand out the credentials of the machine we run on.
 */
const METADATA_BLOCKS: { cidr: [ipaddr.IPv4 | ipaddr.IPv6, number]; words: string }[] = [
  { cidr: ipaddr.parseCIDR('fd00:ec2::/64'), words: 'the AWS instance metadata, DNS and time services over IPv6' },
  { cidr: ipaddr.parseCIDR('fd20:ce::254/128'), words: 'the Google Cloud metadata server over IPv6' },
  { cidr: ipaddr.parseCIDR('fd00:c1::a9fe:a9fe/128'), words: 'the Oracle Cloud instance metadata service over IPv6' },
  { cidr: ipaddr.parseCIDR('100.100.100.200/32'), words: 'the Alibaba Cloud metadata service' },
  { cidr: ipaddr.parseCIDR('168.63.129.16/32'), words: 'the Azure WireServer (platform agent and metadata)' },
];

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

const inMetadataBlock = (parsed: ipaddr.IPv4 | ipaddr.IPv6) =>
  METADATA_BLOCKS.find((b) => b.cidr[0].kind() === parsed.kind() && parsed.match(b.cidr));

/** The address the kernel would connect to: IPv4-mapped IPv6 as its IPv4 address; undefined when not an address. */
function normalised(address: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined {
  if (!ipaddr.isValid(address)) return undefined;
  const parsed = ipaddr.parse(hexTail(address));
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address()
    : parsed;
}

/**
 * The special-purpose range an address belongs to, or undefined for a plain public unicast address.
 * IPv4-mapped IPv6 (`::ffff:a.b.c.d`) is judged by the IPv4 address it carries; every other form that embeds an
 * IPv4 address (NAT64 `64:ff9b::/96`, 6to4, Teredo, SIIT) is refused whole, since where it lands depends on
 * translators we do not see.
 */
export function specialRange(address: string): string | undefined {
  const parsed = normalised(address);
  if (!parsed) return 'invalid';
  if (inMetadataBlock(parsed)) return 'metadata';
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

/** What a link-local or cloud metadata address is, in words; undefined for any other address. */
export function metadataRange(address: string): string | undefined {
  const parsed = normalised(address);
  if (!parsed) return undefined;
  if (parsed.range() === 'linkLocal') return 'a link-local address (cloud metadata lives there)';
  return inMetadataBlock(parsed)?.words;
}

/** True when `allowPrivate` may open the address: this machine or a private network, never metadata. */
export function isOpenableAddress(address: string): boolean {
  const range = specialRange(address);
  return range !== undefined && OPENABLE_RANGES.has(range) && metadataRange(address) === undefined;
}

/** Why an outbound target was refused; `kind` lets a caller classify it (a DNS failure is not an attack). */
export class OutboundTargetError extends Error {
  override name = 'OutboundTargetError';
  constructor(
    readonly kind: 'unresolvable' | 'special' | 'unsupported',
    /** A phrase fit for a client: what was wrong, without a trailing period. */
    readonly reason: string,
    /** A special address that ALLOW_PRIVATE_* would open (loopback, private); false for metadata and the rest. */
    readonly openable = false,
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

const NEVER = 'loopback, private, link-local, metadata and other special-purpose addresses cannot be called';

function describe(host: string, address: string): string {
  const parsed = ipaddr.isValid(address) ? ipaddr.parse(hexTail(address)) : undefined;
  const mapped =
    parsed?.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
      ? ` (${(parsed as ipaddr.IPv6).toIPv4Address().toString()})`
      : '';
  const shown = `${parsed?.toString() ?? address}${mapped}`;
  const metadata = metadataRange(address);
  if (metadata)
    return `the host ${host} resolves to ${shown}, ${metadata}; ${NEVER}, and link-local and metadata ones not even where private networks are allowed`;
  const words = RANGE_WORDS[specialRange(address)!] ?? 'special-purpose';
  return `the host ${host} resolves to ${shown}, a ${words} address; ${NEVER}`;
}

/**
 * Resolves a URL's host once and returns the address to connect to. Refused when any address the name resolves
 * to is special-purpose (a name can hide one among public ones); `allowPrivate` (tests, private setups) lets
 * loopback and private networks through, never link-local or metadata.
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
  const bad = addresses.find(
    (a) => isPrivateAddress(a.address) && !(opts.allowPrivate && isOpenableAddress(a.address)),
  );
  if (bad) throw new OutboundTargetError('special', describe(host, bad.address), isOpenableAddress(bad.address));
  const chosen = addresses[0]!;
  return { host, port, address: chosen.address, family: net.isIP(chosen.address) === 6 ? 6 : 4 };
}

/**
 * Resolves a URL's host and refuses it when any address it resolves to is special-purpose (with `allowPrivate`:
 * link-local, metadata and the other ranges resolveTarget keeps closed). Returns the reason, or undefined when the
 * URL may be called. A check before the fact only: whoever connects must pin with resolveTarget.
 */
export async function privateTargetReason(
  url: URL,
  opts: { lookup?: LookupAll; allowPrivate?: boolean } = {},
): Promise<string | undefined> {
  try {
    await resolveTarget(url, { allowPrivate: opts.allowPrivate ?? false, lookup: opts.lookup });
    return undefined;
  } catch (err) {
    if (!(err instanceof OutboundTargetError)) throw err;
    // Where private networks are allowed, a name this process cannot resolve is left to whoever connects, which
    // checks again: it may be a name only the worker's or the engine's resolver knows.
    if (opts.allowPrivate && err.kind === 'unresolvable') return undefined;
    return err.reason;
  }
}
