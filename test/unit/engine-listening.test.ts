import net from 'node:net';

import { listeningPorts, parseProcNetTcp } from '@shared/engine/listening';

const HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode';
const row = (local: string, remote: string, state: string) =>
  `   0: ${local} ${remote} ${state} 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0 100 0 0 10 0`;

describe('/proc/net/tcp', () => {
  it('reads the listening sockets only, port from hex, address as printed', () => {
    const text = [
      HEADER,
      row('0100007F:1F90', '00000000:0000', '0A'),
      row('00000000:0050', '00000000:0000', '0A'),
      row('0100007F:1F90', '0100007F:D2A4', '01'), // an established connection to 8080
      row('0B00007f:8AE5', '00000000:0000', '0A'),
      '',
    ].join('\n');
    expect(parseProcNetTcp(text)).toEqual([
      { address: '0100007F', port: 8080 },
      { address: '00000000', port: 80 },
      { address: '0B00007F', port: 35557 },
    ]);
  });

  it('skips the header and lines it cannot read', () => {
    expect(parseProcNetTcp('')).toEqual([]);
    expect(parseProcNetTcp(`${row('0100007F:1F90', '00000000:0000', '0A')}\n`)).toEqual([]); // first line: header
    expect(parseProcNetTcp(`${HEADER}\n   0: garbage\n   1: 0100007F 00000000:0000 0A\n`)).toEqual([]);
  });
});

describe('listening ports of a process', () => {
  const servers: net.Server[] = [];
  const listen = (options: net.ListenOptions) =>
    new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      servers.push(server);
      server.once('error', reject);
      server.listen(options, () => resolve((server.address() as net.AddressInfo).port));
    });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });

  it('tells a port reachable from outside from one bound to loopback only', async () => {
    const loopback = await listen({ host: '127.0.0.1', port: 0 });
    const everywhere = await listen({ host: '0.0.0.0', port: 0 });
    const loopback6 = await listen({ host: '::1', port: 0 });
    const mapped = await listen({ host: '::ffff:127.0.0.1', port: 0 });
    // The same port on IPv4 loopback and on every IPv6 address: reachable, so not loopback-only.
    const mixed = await listen({ host: '127.0.0.1', port: 0 });
    await listen({ host: '::', port: mixed, ipv6Only: true });

    const ports = await listeningPorts(process.pid);
    const of = (port: number) => ports.find((p) => p.port === port);
    expect(of(loopback)).toEqual({ port: loopback, loopbackOnly: true });
    expect(of(everywhere)).toEqual({ port: everywhere, loopbackOnly: false });
    expect(of(loopback6)).toEqual({ port: loopback6, loopbackOnly: true });
    expect(of(mapped)).toEqual({ port: mapped, loopbackOnly: true });
    expect(of(mixed)).toEqual({ port: mixed, loopbackOnly: false });
    expect(ports.map((p) => p.port)).toEqual([...new Set(ports.map((p) => p.port))].sort((a, b) => a - b));
  });

  it('finds nothing for no process, or one that does not exist', async () => {
    expect(await listeningPorts(undefined)).toEqual([]);
    expect(await listeningPorts(0)).toEqual([]);
    expect(await listeningPorts(999_999_999)).toEqual([]);
  });
});
