import { Resolver } from 'node:dns/promises';

import { challengeName } from './hostname';
import type { RoutingFinding, TxtFinding } from './types';

/** Answers that mean "no such record": the name does not exist, or has no record of the type asked. */
const NOT_FOUND = new Set(['ENOTFOUND', 'ENODATA', 'NXDOMAIN', 'NODATA']);

const bare = (name: string) => name.toLowerCase().replace(/\.$/, '');

export interface DomainFindings {
  txt: TxtFinding;
  routing: RoutingFinding;
  message: string;
}

/**
 * Asks DNS what a domain's records hold, through `resolvers` (`host:port`; the system's when empty). A missing name
 * or record is a finding ("not found"), never an error; a server that does not answer in time is `error`, which the
 * caller treats as "check again later".
 */
export function createDomainChecker(opts: {
  resolvers: readonly string[];
  timeoutMs: number;
  publicIps: readonly string[];
}) {
  function resolver() {
    const r = new Resolver({ timeout: opts.timeoutMs, tries: 2 });
    if (opts.resolvers.length) r.setServers([...opts.resolvers]);
    return r;
  }

  /** The records' values, [] when there are none, or the DNS error's code. */
  async function ask<T>(q: () => Promise<T[]>): Promise<T[] | { error: string }> {
    try {
      return await q();
    } catch (err) {
      const code = (err as { code?: string }).code ?? 'EUNKNOWN';
      if (NOT_FOUND.has(code)) return [];
      return { error: code };
    }
  }

  async function routing(r: Resolver, hostname: string, stableHost: string): Promise<RoutingFinding> {
    const cnames = await ask(() => r.resolveCname(hostname));
    if ('error' in cnames) return 'error';
    if (cnames.length) return cnames.some((c) => bare(c) === bare(stableHost)) ? 'cname' : 'elsewhere';
    const [v4, v6] = await Promise.all([ask(() => r.resolve4(hostname)), ask(() => r.resolve6(hostname))]);
    if ('error' in v4 && 'error' in v6) return 'error';
    const addresses = [...('error' in v4 ? [] : v4), ...('error' in v6 ? [] : v6)];
    if (addresses.length === 0) return 'missing';
    return addresses.every((a) => opts.publicIps.includes(a)) ? 'address' : 'elsewhere';
  }

  return {
    async check(d: { hostname: string; token: string }, stableHost: string): Promise<DomainFindings> {
      const r = resolver();
      const name = challengeName(d.hostname);
      const [txtAnswer, route] = await Promise.all([ask(() => r.resolveTxt(name)), routing(r, d.hostname, stableHost)]);
      let txt: TxtFinding;
      let message: string;
      if ('error' in txtAnswer) {
        txt = 'error';
        message = `DNS did not answer for the TXT record ${name} (${txtAnswer.error}); it is checked again later`;
      } else {
        const values = txtAnswer.map((chunks) => chunks.join(''));
        txt = values.includes(d.token) ? 'found' : values.length ? 'other' : 'missing';
        message =
          txt === 'found'
            ? `TXT record ${name} holds the domain's token`
            : txt === 'other'
              ? `TXT record ${name} holds another value; set it to the domain's token`
              : `TXT record ${name} not found; create it with the domain's token as its value`;
      }
      const routeWords: Record<RoutingFinding, string> = {
        cname: `${d.hostname} is a CNAME to ${stableHost}`,
        address: `${d.hostname} points at the edge router's address`,
        missing: `warning: ${d.hostname} has no CNAME to ${stableHost} yet; traffic reaches the deployment only once it has`,
        elsewhere: `warning: ${d.hostname} points elsewhere, not at ${stableHost}; traffic does not reach the deployment`,
        error: `warning: DNS did not answer for ${d.hostname}'s CNAME or addresses`,
      };
      return { txt, routing: route, message: `${message}; ${routeWords[route]}` };
    },
  };
}

export type DomainChecker = ReturnType<typeof createDomainChecker>;
