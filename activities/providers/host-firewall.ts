import { execFile } from 'node:child_process';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { promisify } from 'node:util';

import { ifAbsent } from '@shared/ignore';

const run = promisify(execFile);

/**
 * Tenant containers (and builds) run on bridges whose interface names start with this prefix: the engine_local
 * org networks (`slw-<hash>`) and the build network. Every rule below matches the iptables wildcard `slw+`.
 */
export const BRIDGE_PREFIX = 'slw-';
const IFACE = 'slw+';
const INPUT_CHAIN = 'SLIPWAY-ISOLATION-INPUT';
const FORWARD_CHAIN = 'SLIPWAY-ISOLATION-FORWARD';
/** nat table: tenant connections to a host address on the object store's port, rewritten to the store on loopback. */
const S3_NAT_CHAIN = 'SLIPWAY-S3-DNAT';
/** filter table: accepts those rewritten connections, and nothing else. */
const S3_INPUT_CHAIN = 'SLIPWAY-S3-INPUT';

/**
 * Where a container must never connect to: private, shared (CGNAT), link-local (cloud metadata at 169.254.169.254)
 * and loopback ranges. Public addresses (including the documentation ranges this host's network uses) stay open.
 */
const PRIVATE_V4 = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', '169.254.0.0/16', '127.0.0.0/8'];

/**
 * The one opening in the isolation: the embedded object store (MinIO on 127.0.0.1:<port>) for deployed apps' linked
 * buckets. A container connects to its network's gateway (any host address) on that port; nat PREROUTING rewrites
 * the connection to 127.0.0.1:<port>, which the kernel routes only from interfaces with route_localnet set (the slw-
 * bridges alone, never `all`, so no other network can address the host's loopback), and INPUT accepts exactly that
 * rewritten flow. Every other port of every host address stays rejected, and MinIO itself answers only to keys:
 * apps get keys that open their own bucket, and its root password is generated (scripts/stack/parts.ts).
 */
export interface S3Forward {
  port: number;
}

/**
 * The forward the configuration asks for: with no S3_APP_ENDPOINT and the store on this host's loopback, apps reach it
 * through the gateway; otherwise they use S3_APP_ENDPOINT (or S3_ENDPOINT) as it is, and no port is opened.
 */
export function s3ForwardFor(cfg: { S3_ENDPOINT?: string | undefined; S3_APP_ENDPOINT?: string | undefined }) {
  if (cfg.S3_APP_ENDPOINT || !cfg.S3_ENDPOINT) return undefined;
  const url = new URL(cfg.S3_ENDPOINT);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost') return undefined;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  return { port } satisfies S3Forward;
}

/** What the worker (and a build) passes to ensureHostIsolation, from its configuration. */
export const isolationOptions = (cfg: {
  DOCKER_HOST?: string | undefined;
  S3_ENDPOINT?: string | undefined;
  S3_APP_ENDPOINT?: string | undefined;
}) => {
  const s3 = s3ForwardFor(cfg);
  return { ...(cfg.DOCKER_HOST ? { dockerHost: cfg.DOCKER_HOST } : {}), ...(s3 ? { s3 } : {}) };
};

/**
 * Lets the host route packets for 127.0.0.0/8 that arrive on this tenant bridge (the S3 forward's DNAT target). Only
 * when the forward is on; a bridge that is gone (or a host without /proc/sys) is nothing to do.
 */
export async function allowLoopbackForward(bridge: string): Promise<void> {
  if (!/^slw-[0-9a-z]+$/.test(bridge)) throw new TypeError(`not a tenant bridge: ${bridge}`);
  // No such bridge yet: the engine makes it with the network's first container, and the next start sets it.
  await writeFile(`/proc/sys/net/ipv4/conf/${bridge}/route_localnet`, '1').catch(ifAbsent(undefined));
}

export interface HostIsolation {
  applied: boolean;
  /** Why the rules could not be installed (then an operator must do it: README, "Tenant isolation"). */
  reason?: string;
}

/** IPv4 nameservers of this host: containers resolve through them (the engine's DNS forwards from the container). */
export async function hostNameservers(resolvConf = '/etc/resolv.conf'): Promise<string[]> {
  // A host with no resolv.conf names no nameserver to let through; an unreadable one is an error to see.
  const text = await readFile(resolvConf, 'utf8').catch(ifAbsent(''));
  return [...text.matchAll(/^\s*nameserver\s+(\S+)/gm)].map((m) => m[1]!).filter((a) => net.isIPv4(a));
}

/** The rules, as one iptables-restore transaction: declaring a chain with --noflush empties it, atomically. */
export function isolationRules(nameservers: string[]): string {
  const dns = (chain: string, action: string) =>
    nameservers.flatMap((ns) =>
      ['udp', 'tcp'].map((p) => `-A ${chain} -d ${ns}/32 -p ${p} -m ${p} --dport 53 -j ${action}`),
    );
  return [
    '*filter',
    `:${INPUT_CHAIN} - [0:0]`,
    `:${FORWARD_CHAIN} - [0:0]`,
    // Replies to what the host opened (readiness probes, docker-proxy) come back in through INPUT.
    `-A ${INPUT_CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`,
    ...dns(INPUT_CHAIN, 'ACCEPT'),
    // Anything else from a tenant bridge to the host itself: services listening on 0.0.0.0 stay out of reach,
    // whichever host address (bridge gateway, eth0) the container aims at.
    `-A ${INPUT_CHAIN} -p tcp -j REJECT --reject-with tcp-reset`,
    `-A ${INPUT_CHAIN} -j REJECT --reject-with icmp-port-unreachable`,
    `-A ${FORWARD_CHAIN} -m conntrack --ctstate RELATED,ESTABLISHED -j RETURN`,
    // Bridge to bridge is the engine's own isolation to decide (DOCKER-ISOLATION-STAGE-*, after DOCKER-USER).
    `-A ${FORWARD_CHAIN} -o ${IFACE} -j RETURN`,
    ...dns(FORWARD_CHAIN, 'RETURN'),
    ...PRIVATE_V4.flatMap((range) => [
      `-A ${FORWARD_CHAIN} -d ${range} -p tcp -j REJECT --reject-with tcp-reset`,
      `-A ${FORWARD_CHAIN} -d ${range} -j REJECT --reject-with icmp-net-unreachable`,
    ]),
    'COMMIT',
    '',
  ].join('\n');
}

const iptables = (args: string[]) => run('iptables', ['-w', '5', ...args]);
/**
 * Whether a check (-L, -C) or a removal (-D, -F, -X) found what it names: iptables exits 1 when the chain or rule is
 * not there. Any other failure (no iptables, a bad argument, the xtables lock) is thrown for the caller to report.
 */
const succeeds = (args: string[]) =>
  iptables(args).then(
    () => true,
    (err: unknown) => {
      if ((err as { code?: unknown }).code === 1) return false;
      throw err;
    },
  );

/** Jumps to our chains, first in INPUT and DOCKER-USER, once each. */
const JUMPS: [string, string][] = [
  ['INPUT', INPUT_CHAIN],
  ['DOCKER-USER', FORWARD_CHAIN],
];

/**
 * Installs (or refreshes) the host firewall rules that keep tenant containers away from the host and private
 * networks. Idempotent: the chains are replaced whole, the jumps added only when missing. Safe to run at every
 * worker start, by several processes at once.
 */
export async function ensureHostIsolation(opts: {
  dockerHost?: string;
  resolvConf?: string;
  s3?: S3Forward;
}): Promise<HostIsolation> {
  if (opts.dockerHost && !opts.dockerHost.startsWith('unix://')) {
    return { applied: false, reason: `the engine is remote (${new URL(opts.dockerHost).protocol}//…)` };
  }
  try {
    // The engine creates DOCKER-USER when it starts; create it if it has not yet (it keeps what it finds).
    if (!(await succeeds(['-n', '-L', 'DOCKER-USER']))) await iptables(['-N', 'DOCKER-USER']);
    const rules = isolationRules(await hostNameservers(opts.resolvConf));
    await new Promise<void>((resolve, reject) => {
      const child = execFile('iptables-restore', ['-w', '5', '--noflush'], (err) => (err ? reject(err) : resolve()));
      child.stdin?.end(rules);
    });
    for (const [from, to] of JUMPS) {
      if (!(await succeeds(['-C', from, '-i', IFACE, '-j', to])))
        await iptables(['-I', from, '1', '-i', IFACE, '-j', to]);
    }
    if (opts.s3) await ensureS3Forward(opts.s3);
    return { applied: true };
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') return { applied: false, reason: 'iptables is not installed on this host' };
    return { applied: false, reason: `iptables failed: ${(e.stderr ?? e.message).trim().split('\n')[0]}` };
  }
}

/**
 * The S3 forward's rules, in chains of their own (so a refresh of the isolation chains, by any version of this code,
 * never drops them): nat PREROUTING rewrites tenant connections to a host address on the port to 127.0.0.1:<port>, and
 * INPUT accepts exactly those rewritten connections, its jump kept first, before the isolation's rejects. Rules are
 * added when missing and never replaced: several stacks on one host (tests) each add their own port.
 */
async function ensureS3Forward(s3: S3Forward): Promise<void> {
  for (const [table, chain] of [
    ['nat', S3_NAT_CHAIN],
    ['filter', S3_INPUT_CHAIN],
  ] as const)
    if (!(await succeeds(['-t', table, '-n', '-L', chain]))) await succeeds(['-t', table, '-N', chain]);
  const port = String(s3.port);
  const nat = ['-p', 'tcp', '-m', 'tcp', '--dport', port, '-m', 'addrtype', '--dst-type', 'LOCAL'];
  const natRule = [...nat, '-j', 'DNAT', '--to-destination', `127.0.0.1:${port}`];
  if (!(await succeeds(['-t', 'nat', '-C', S3_NAT_CHAIN, ...natRule])))
    await iptables(['-t', 'nat', '-A', S3_NAT_CHAIN, ...natRule]);
  const accept = ['-d', '127.0.0.1/32', '-p', 'tcp', '-m', 'tcp', '--dport', port];
  const acceptRule = [...accept, '-m', 'conntrack', '--ctstate', 'DNAT', '-j', 'ACCEPT'];
  if (!(await succeeds(['-C', S3_INPUT_CHAIN, ...acceptRule]))) await iptables(['-A', S3_INPUT_CHAIN, ...acceptRule]);
  if (!(await succeeds(['-t', 'nat', '-C', 'PREROUTING', '-i', IFACE, '-j', S3_NAT_CHAIN])))
    await iptables(['-t', 'nat', '-I', 'PREROUTING', '1', '-i', IFACE, '-j', S3_NAT_CHAIN]);
  // First in INPUT, ahead of the isolation chain's jump wherever that one was put.
  while (await succeeds(['-D', 'INPUT', '-i', IFACE, '-j', S3_INPUT_CHAIN]));
  await iptables(['-I', 'INPUT', '1', '-i', IFACE, '-j', S3_INPUT_CHAIN]);
  const bridges = (await readdir('/sys/class/net')).filter((n) => n.startsWith(BRIDGE_PREFIX));
  for (const b of bridges) await allowLoopbackForward(b);
}

/** Removes every jump and both chains (an operator turning the isolation off, or tests cleaning up). */
export async function removeHostIsolation(): Promise<void> {
  for (const [from, to] of JUMPS) while (await succeeds(['-D', from, '-i', IFACE, '-j', to]));
  for (const chain of [INPUT_CHAIN, FORWARD_CHAIN]) {
    await succeeds(['-F', chain]);
    await succeeds(['-X', chain]);
  }
  while (await succeeds(['-t', 'nat', '-D', 'PREROUTING', '-i', IFACE, '-j', S3_NAT_CHAIN]));
  while (await succeeds(['-D', 'INPUT', '-i', IFACE, '-j', S3_INPUT_CHAIN]));
  await succeeds(['-F', S3_INPUT_CHAIN]);
  await succeeds(['-X', S3_INPUT_CHAIN]);
  await succeeds(['-t', 'nat', '-F', S3_NAT_CHAIN]);
  await succeeds(['-t', 'nat', '-X', S3_NAT_CHAIN]);
}
