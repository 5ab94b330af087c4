import dns2 from 'dns2';

import { freePort } from '@scripts/stack/process';

const { Packet } = dns2;

type Kind = 'TXT' | 'CNAME' | 'A';

/**
 * A real DNS server on loopback (UDP and TCP on one port) whose zone a test edits as it goes: what the domain checks
 * of the api and the worker read through DNS_RESOLVERS. A name it holds nothing for answers NXDOMAIN; a name with
 * other records but none of the type asked answers NOERROR with no answer (NODATA), as real servers do.
 */
export async function startDnsServer() {
  const zone = new Map<string, { kind: Kind; value: string }[]>();
  const key = (name: string) => name.toLowerCase().replace(/\.$/, '');
  const server = dns2.createServer({
    udp: true,
    tcp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const [question] = request.questions;
      const name = question?.name ?? '';
      const records = zone.get(key(name));
      if (!records) response.header.rcode = Packet.RCODE.NXDOMAIN;
      for (const r of records ?? []) {
        const base = { name, class: Packet.CLASS.IN, ttl: 1 };
        const answer = (record: Record<string, unknown>) => response.answers.push(new Packet.Resource(record));
        if (r.kind === 'TXT' && question?.type === Packet.TYPE.TXT)
          answer({ ...base, type: Packet.TYPE.TXT, data: r.value });
        if (r.kind === 'CNAME' && question?.type === Packet.TYPE.CNAME)
          answer({ ...base, type: Packet.TYPE.CNAME, domain: r.value });
        if (r.kind === 'A' && question?.type === Packet.TYPE.A)
          answer({ ...base, type: Packet.TYPE.A, address: r.value });
      }
      // A client that went away before its answer is no failure of the server's.
      Promise.resolve(send(response)).catch(() => undefined);
    },
  });
  const port = await freePort();
  await server.listen({ udp: { port, address: '127.0.0.1' }, tcp: { port, address: '127.0.0.1' } });
  return {
    /** For DNS_RESOLVERS. */
    address: `127.0.0.1:${port}`,
    add(kind: Kind, name: string, value: string) {
      zone.set(key(name), [...(zone.get(key(name)) ?? []), { kind, value }]);
    },
    /** Removes the name's records of `kind` (all of them); the name goes when it holds none. */
    remove(kind: Kind, name: string) {
      const left = (zone.get(key(name)) ?? []).filter((r) => r.kind !== kind);
      if (left.length) zone.set(key(name), left);
      else zone.delete(key(name));
    },
    close: () => server.close(),
  };
}
