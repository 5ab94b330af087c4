import { type ChildProcess, execFile, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';

import { LABELS } from '@shared/constants';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

const run = promisify(execFile);

/** Runs `cmd` in a container (as the tenant's app could) and returns its exit code and output. */
async function execIn(h: Harness, containerId: string, cmd: string[]) {
  const exec = await h.docker.getContainer(containerId).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  let output = '';
  const sink = new PassThrough();
  sink.on('data', (c: Buffer) => (output += c.toString()));
  h.docker.modem.demuxStream(stream, sink, sink);
  await new Promise((resolve) => stream.once('end', resolve));
  const { ExitCode } = await exec.inspect();
  return { exitCode: ExitCode, output };
}

/**
 * An HTTP GET from inside the container (busybox nc: the static busybox's wget crashes in a scratch image), as
 * the tenant's app could send it; what came back, and nc's exit code (1 when it could not connect).
 */
function fetchFromContainer(h: Harness, containerId: string, url: string) {
  const { hostname, port } = new URL(url);
  const portOrDefault = port || '80';
  return execIn(h, containerId, [
    '/bin/busybox',
    'sh',
    '-c',
    `printf 'GET / HTTP/1.0\\r\\n\\r\\n' | /bin/busybox nc -w 5 ${hostname} ${portOrDefault}`,
  ]);
}

/** A server answering `secret` on every address of this host, as services that listen on 0.0.0.0 do. */
async function hostServer(secret: string) {
  const server = http.createServer((_req, res) => res.end(secret));
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('tenant containers are confined: privileges, logs, the host and private networks', () => {
  let h: Harness;
  let api: ReturnType<typeof client>;
  let deploymentId: string;
  let containerId: string;
  let gateway: string;

  beforeAll(async () => {
    // The in-process worker installs the host firewall at start, as worker/main.ts does.
    h = await startHarness('isolation', { RATE_LIMIT_COMPAT_READS_PER_MIN: '100000' });
    const image = await buildFixtureImage(h.docker, 'hello');
    const org = await h.newOrg();
    api = client(h, org.token);
    const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'confined', port: 8080 });
    deploymentId = r.body.deploymentId;
    const d = await api.waitFor(deploymentId, ['running', 'failed']);
    expect(d.status).toBe('running');
    const [c] = await h.docker.listContainers({ filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] } });
    containerId = c!.Id;
    const network = await h.docker.getNetwork(`slipway-org-${org.orgId}`).inspect();
    gateway = network.IPAM!.Config![0]!.Gateway!;
  });
  afterAll(async () => {
    if (deploymentId) await api.del(`/compat/deployments/${deploymentId}`);
    await h?.stop();
  });

  it('runs the app with no new privileges, only an app’s capabilities and rotated logs, on an slw- bridge', async () => {
    const info = await h.docker.getContainer(containerId).inspect();
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges');
    expect(info.HostConfig.CapDrop).toEqual(['ALL']);
    expect([...(info.HostConfig.CapAdd ?? [])].sort()).toEqual(
      ['CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'KILL', 'NET_BIND_SERVICE', 'SETGID', 'SETUID'].sort(),
    );
    expect(info.HostConfig.LogConfig).toEqual({ Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '3' } });
    // What the kernel enforces on the app's process: the flag, and exactly these capability bits (0x4eb).
    const status = await execIn(h, containerId, ['/bin/busybox', 'cat', '/proc/1/status']);
    expect(status.output).toMatch(/^NoNewPrivs:\s+1$/m);
    expect(status.output).toMatch(/^CapEff:\s+00000000000004eb$/m);
    const [net] = Object.keys(info.NetworkSettings.Networks);
    const network = await h.docker.getNetwork(net!).inspect();
    expect(network.Options?.['com.docker.network.bridge.name']).toMatch(/^slw-[0-9a-f]{11}$/);
    const d = await api.get<{ url: string }>(`/compat/deployments/${deploymentId}`);
    expect(await (await fetch(d.body.url)).text()).toBe('hello from slipway\n');
  });

  it('cannot reach a host service listening on 0.0.0.0, by the bridge gateway or by the host’s own address', async () => {
    const { server, port } = await hostServer('host-secret');
    try {
      const hostAddresses = Object.entries(os.networkInterfaces())
        .filter(([name]) => !/^(lo|docker|br-|slw-|veth)/.test(name))
        .flatMap(([, addrs]) => (addrs ?? []).filter((a) => a.family === 'IPv4' && !a.internal).map((a) => a.address));
      const targets = [gateway, ...hostAddresses];
      expect(targets.length).toBeGreaterThan(1);
      for (const ip of targets) {
        // The service does answer there, from the host itself.
        expect(await (await fetch(`http://${ip}:${port}/`)).text()).toBe('host-secret');
        const fromTenant = await fetchFromContainer(h, containerId, `http://${ip}:${port}/`);
        expect({ ip, answered: fromTenant.exitCode === 0 || fromTenant.output.includes('host-secret') }).toEqual({
          ip,
          answered: false,
        });
      }
      // What must stay open does: names resolve through the host's nameserver (a private address, let through for
      // DNS only), and public addresses answer (builds fetch Debian's mirror the same way).
      const lookup = await execIn(h, containerId, ['/bin/busybox', 'nslookup', 'deb.debian.org']);
      const mirror = /Name:\s+deb\.debian\.org\s+Address:\s+(\d+\.\d+\.\d+\.\d+)/.exec(lookup.output)?.[1];
      expect(mirror).toBeDefined();
      // A TCP connection is the signal: what the mirror's front answers to a bare request varies (at times nothing).
      const connects = async () => {
        for (let attempt = 0; attempt < 3; attempt++) {
          const probe = await execIn(h, containerId, [
            '/bin/busybox',
            'sh',
            '-c',
            `/bin/busybox nc -w 5 ${mirror} 443 </dev/null`,
          ]);
          if (probe.exitCode === 0) return true;
        }
        return false;
      };
      expect(await connects()).toBe(true);
      // The container's own network still works: it reaches its own app.
      expect((await fetchFromContainer(h, containerId, 'http://127.0.0.1:8080/')).output).toContain(
        'hello from slipway',
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reaches the object store’s S3 port through the gateway, and no other loopback service of the host', async () => {
    const store = new URL(h.config.S3_ENDPOINT!);
    // MinIO answers there (an anonymous GET /, refused by S3 itself): the one opening, forwarded to 127.0.0.1.
    const s3 = await fetchFromContainer(h, containerId, `http://${gateway}:${store.port}/`);
    expect(s3.output).toMatch(/^HTTP\/1\.[01] \d{3}/);
    // MinIO's own headers: `Server: MinIO`, or (when it sees nc's half-closed connection first and answers 499 without
    // that header) the S3 request ID it puts on every answer.
    expect(s3.output).toMatch(/^(Server: MinIO|X-Amz-Request-Id: [0-9A-F]+)/im);
    // A service on loopback (as Redis, FerretDB and MinIO itself listen) stays out of reach on any other port.
    const server = http.createServer((_req, res) => res.end('loopback-secret'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('loopback-secret');
      const fromTenant = await fetchFromContainer(h, containerId, `http://${gateway}:${port}/`);
      expect(fromTenant.output).not.toContain('loopback-secret');
      expect(fromTenant.exitCode).not.toBe(0);
      const redis = new URL(h.config.REDIS_URL);
      const toRedis = await fetchFromContainer(h, containerId, `http://${gateway}:${redis.port}/`);
      expect(toRedis.exitCode).not.toBe(0);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  describe('a private network beyond the host', () => {
    // A namespace behind a veth pair plays a machine on the operator's private LAN (192.168.x.2).
    const tag = `${process.pid % 100000}`;
    const ns = `slwtest-${tag}`;
    const hostSide = `vsi${tag}h`;
    const octet = 200 + (process.pid % 50);
    const [hostIp, peerIp] = [`192.168.${octet}.1`, `192.168.${octet}.2`];
    let listener: ChildProcess | undefined;

    beforeAll(async () => {
      await run('ip', ['netns', 'add', ns]);
      await run('ip', ['link', 'add', hostSide, 'type', 'veth', 'peer', 'name', `vsi${tag}n`]);
      await run('ip', ['link', 'set', `vsi${tag}n`, 'netns', ns]);
      await run('ip', ['addr', 'add', `${hostIp}/30`, 'dev', hostSide]);
      await run('ip', ['link', 'set', hostSide, 'up']);
      await run('ip', ['netns', 'exec', ns, 'ip', 'addr', 'add', `${peerIp}/30`, 'dev', `vsi${tag}n`]);
      await run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', `vsi${tag}n`, 'up']);
      await run('ip', ['netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up']);
      await run('ip', ['netns', 'exec', ns, 'ip', 'route', 'add', 'default', 'via', hostIp]);
      listener = spawn(
        'ip',
        [
          'netns',
          'exec',
          ns,
          process.execPath,
          '-e',
          "require('http').createServer((q, s) => s.end('private-secret')).listen(7777, '0.0.0.0')",
        ],
        { stdio: 'ignore' },
      );
      await eventually(
        async () => ((await (await fetch(`http://${peerIp}:7777/`)).text()) === 'private-secret' ? true : undefined),
        'the private listener',
      );
    });
    afterAll(async () => {
      if (listener && listener.exitCode === null) {
        listener.kill('SIGTERM');
        await new Promise((resolve) => listener!.once('exit', resolve));
      }
      await run('ip', ['netns', 'del', ns]).catch(() => undefined);
      await run('ip', ['link', 'del', hostSide]).catch(() => undefined);
    });

    it('cannot connect to a private-range address the host can reach', async () => {
      const fromTenant = await fetchFromContainer(h, containerId, `http://${peerIp}:7777/`);
      expect(fromTenant.output).not.toContain('private-secret');
      expect(fromTenant.exitCode).not.toBe(0);
    });
  });
});
