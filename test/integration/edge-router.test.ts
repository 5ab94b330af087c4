import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type Docker from 'dockerode';
import { type Agent, request } from 'undici';

import { startCaddy } from '@scripts/stack/edge';
import { freePort, type Managed, startProcess, waitUntil } from '@scripts/stack/process';
import { toolBinary } from '@scripts/stack/tools';
import {
  createEdgeRouter,
  deploymentHost,
  deploymentUrl,
  EdgeHostTakenError,
  type EdgeRouter,
  upstreamFor,
} from '@shared/edge';
import { createDockerClient } from '@shared/engine/docker-client';

import { edgeAgent, type EdgeAnswer, edgeGet } from '../helpers/edge';

/** Everything this file makes on the engine carries this label, and only that is removed. */
const RUN = `edge-router-${randomBytes(4).toString('hex')}`;
const TEST_LABEL = 'dev.slipway.test';

const get = (url: string, opts: { host?: string; accept?: string; onRetry?: () => void } = {}) =>
  edgeGet(url, { ...opts, agent });

let docker: Docker;
let agent: Agent;
let router: EdgeRouter;
let edgePort: number;
let network: string;
/** The replicas: slipway/static's busybox httpd, each answering its own name. */
const replicas: { name: string; id: string; upstream: string }[] = [];

const through = (host: string, accept?: string, onRetry?: () => void) =>
  get(`http://127.0.0.1:${edgePort}/`, { host, accept, onRetry });
const newDeployment = (name: string) => {
  const id = randomUUID();
  return { id, host: deploymentHost(name, id, 'localhost') };
};

async function startReplica(name: string) {
  const container = await docker.createContainer({
    name: `${RUN}-${name}`,
    Image: process.env.BUILD_BASE_IMAGE_STATIC!,
    Cmd: ['sh', '-c', `echo ${name} > /srv/www/index.html && exec busybox httpd -f -p 8080 -h /srv/www`],
    ExposedPorts: { '8080/tcp': {} },
    Labels: { [TEST_LABEL]: RUN },
    // Published as engine_local publishes a deployment: an engine-chosen port on the bind address.
    HostConfig: { NetworkMode: network, PortBindings: { '8080/tcp': [{ HostIp: '127.0.0.1', HostPort: '' }] } },
  });
  await container.start();
  const info = await container.inspect();
  const upstream = upstreamFor({ hostPort: Number(info.NetworkSettings.Ports['8080/tcp']![0]!.HostPort) }, '127.0.0.1');
  // docker-proxy accepts before the app listens: ready is when the app answers.
  await waitUntil(`replica ${name}`, async () => (await get(`http://${upstream}/`)).body === `${name}\n`, {
    timeoutMs: 30_000,
  });
  return { name, id: info.Id, upstream };
}

beforeAll(async () => {
  docker = createDockerClient(process.env.DOCKER_HOST);
  agent = edgeAgent();
  // The router global setup started, as every test file gets it, with its upstreams in files as the worker has them.
  router = createEdgeRouter({
    adminUrl: process.env.EDGE_ADMIN_URL!,
    listen: [`127.0.0.1:${process.env.EDGE_PORT}`],
    upstreamsDir: process.env.EDGE_UPSTREAMS_DIR,
  });
  edgePort = Number(process.env.EDGE_PORT);
  // A tenant-style bridge (the host firewall's `slw+` rules cover it): the host still reaches its containers.
  const bridge = `slw-${randomBytes(6).toString('hex').slice(0, 11)}`;
  network = (
    await docker.createNetwork({
      Name: RUN,
      Driver: 'bridge',
      Options: { 'com.docker.network.bridge.name': bridge },
      Labels: { [TEST_LABEL]: RUN },
    })
  ).id;
  for (const name of ['one', 'two', 'three']) replicas.push(await startReplica(name));
});

afterAll(async () => {
  await agent?.close();
  const mine = await docker.listContainers({ all: true, filters: { label: [`${TEST_LABEL}=${RUN}`] } });
  await Promise.all(mine.map((c) => docker.getContainer(c.Id).remove({ force: true })));
  if (network) await docker.getNetwork(network).remove();
});

describe('stable addresses', () => {
  it('builds a DNS-safe host from the name and the id, the same every time', () => {
    const id = '5F0C2A9E-1B7D-4C3A-9E8F-0123456789AB';

    expect(deploymentHost('My App!', id, 'localhost')).toBe('my-app-5f0c2a9e1b7d.localhost');
    expect(deploymentHost('My App!', id, 'localhost')).toBe(deploymentHost('My App!', id, 'localhost'));
    expect(deploymentUrl('My App!', id, { domain: 'apps.example.com', port: 8088 })).toBe(
      'http://my-app-5f0c2a9e1b7d.apps.example.com:8088',
    );
    expect(deploymentUrl('api', id, { domain: 'apps.example.com', port: 80 })).toBe(
      'http://api-5f0c2a9e1b7d.apps.example.com',
    );
    expect(deploymentHost('---', id, 'localhost')).toBe('app-5f0c2a9e1b7d.localhost');
    expect(deploymentHost('x'.repeat(200), id, 'localhost').split('.')[0]).toHaveLength(63);
  });
});

describe('edge router (real Caddy, real containers)', () => {
  it('serves a published deployment at its URL, chosen by Host', async () => {
    const id = randomUUID();
    const url = deploymentUrl('hello', id, { domain: 'localhost', port: edgePort });
    const host = new URL(url).hostname;

    await router.publish(id, host, [replicas[0]!.upstream]);

    expect(await get(url)).toMatchObject({ status: 200, body: 'one\n' });
    expect(await router.list()).toContainEqual({
      deploymentId: id,
      host,
      state: 'published',
      upstreams: [replicas[0]!.upstream],
    });
    await router.unpublish(id);
  });

  it('spreads requests over three replicas and skips one that died', async () => {
    const d = newDeployment('spread');
    await router.publish(
      d.id,
      d.host,
      replicas.map((r) => r.upstream),
    );

    const seen = new Set<string>();
    for (let i = 0; i < 12; i++) seen.add((await through(d.host)).body.trim());
    expect([...seen].sort()).toEqual(['one', 'three', 'two']);

    await docker.getContainer(replicas[2]!.id).stop({ t: 0 });
    // Other deployments' publishes reload the router meanwhile, as they do on a busy instance: a request that met the
    // dead replica is tried on the next one all the same.
    const others = newDeployment('reloads');
    let reloading = true;
    const reloads = (async () => {
      while (reloading) {
        await router.publish(others.id, others.host, [replicas[0]!.upstream]);
        await router.unpublish(others.id);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const after: EdgeAnswer[] = [];
    for (let i = 0; i < 12; i++) after.push(await through(d.host));
    reloading = false;
    await reloads;
    expect(after.filter((a) => a.status !== 200 || a.body === 'three\n')).toEqual([]);
    expect(new Set(after.map((a) => a.body))).toEqual(new Set(['one\n', 'two\n']));

    await router.unpublish(d.id);
  });

  it('switches upstreams under a client polling every 50 ms with only 2xx answers', async () => {
    const d = newDeployment('switch');
    await router.publish(d.id, d.host, [replicas[0]!.upstream]);
    const polls: EdgeAnswer[] = [];
    let reconnects = 0;
    let polling = true;
    // A browser-like keep-alive client (test/helpers/edge.ts): a GET whose kept connection the router closed at a
    // config change before any answer is sent again on a new one, and counted.
    const poller = (async () => {
      while (polling) {
        polls.push(await through(d.host, undefined, () => reconnects++));
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    const waitPolls = async (n: number) => {
      const until = polls.length + n;
      while (polls.length < until) await new Promise((resolve) => setTimeout(resolve, 20));
    };

    const sets = [[replicas[1]!], [replicas[0]!, replicas[1]!], [replicas[0]!]];
    for (const set of [...sets, ...sets]) {
      await waitPolls(3);
      await router.publish(
        d.id,
        d.host,
        set.map((r) => r.upstream),
      );
    }
    await waitPolls(3);
    polling = false;
    await poller;

    expect(polls.filter((p) => p.status !== 200)).toEqual([]);
    expect(new Set(polls.map((p) => p.body))).toEqual(new Set(['one\n', 'two\n']));
    expect(polls.at(-1)!.body).toBe('one\n');
    // Most answers came on the first try: a resent GET is the exception of a change closing idle connections.
    expect(reconnects).toBeLessThan(polls.length / 4);
    await router.unpublish(d.id);
  });

  it('answers a stopped deployment with its own 503 page, and serves it again once re-published', async () => {
    const d = newDeployment('paused');
    await router.publish(d.id, d.host, [replicas[0]!.upstream]);

    await router.showStopped(d.id, d.host);
    const page = await through(d.host, 'text/html,application/xhtml+xml');
    const text = await through(d.host);

    expect(page.status).toBe(503);
    expect(page.type).toBe('text/html; charset=utf-8');
    expect(page.body).toContain(`The deployment at <b>${d.host}</b> is stopped`);
    expect(text).toMatchObject({ status: 503, type: 'text/plain; charset=utf-8' });
    expect(text.body).toContain(`The deployment at ${d.host} is stopped`);
    expect(text.body).toContain(`start it again: POST /platform/deployments/${d.id}/start on your Slipway api`);
    expect(page.body).toContain(`<code>POST /platform/deployments/${d.id}/start</code>`);
    for (const answer of [page, text]) expect(answer.body).not.toContain('{id}');
    expect(await router.list()).toContainEqual({ deploymentId: d.id, host: d.host, state: 'stopped', upstreams: [] });

    await router.publish(d.id, d.host, [replicas[1]!.upstream]);
    expect(await through(d.host)).toMatchObject({ status: 200, body: 'two\n' });
    await router.unpublish(d.id);
  });

  it("answers a removed deployment's host with the router's 404, and removing twice is fine", async () => {
    const d = newDeployment('gone');
    await router.publish(d.id, d.host, [replicas[0]!.upstream]);

    await router.unpublish(d.id);
    await router.unpublish(d.id);

    const answer = await through(d.host);
    expect(answer).toMatchObject({ status: 404, type: 'text/plain; charset=utf-8' });
    expect(answer.body).toMatch(/^No Slipway deployment answers at this address\./);
    expect((await router.list()).some((r) => r.deploymentId === d.id)).toBe(false);
  });

  it('keeps one route per deployment however often it is published, and never hands its host to another', async () => {
    const d = newDeployment('again');

    for (let i = 0; i < 3; i++) await router.publish(d.id, d.host, [replicas[0]!.upstream]);
    await Promise.all([0, 1].map((i) => router.publish(d.id, d.host, [replicas[i]!.upstream])));
    await router.publish(d.id, d.host, [replicas[1]!.upstream]);

    expect((await router.list()).filter((r) => r.deploymentId === d.id)).toHaveLength(1);
    expect(await through(d.host)).toMatchObject({ status: 200, body: 'two\n' });
    await expect(router.publish(randomUUID(), d.host, [replicas[0]!.upstream])).rejects.toThrow(EdgeHostTakenError);
    expect(await through(d.host)).toMatchObject({ status: 200, body: 'two\n' });
    await router.unpublish(d.id);
  });
});

describe('a router that restarted', () => {
  let dir: string;
  let caddy: Managed | undefined;

  afterAll(async () => {
    await caddy?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  /** Caddy as the compose file runs it: no config at all, only its admin address. */
  async function bareCaddy(adminPort: number): Promise<Managed> {
    const proc = startProcess('caddy', toolBinary('caddy'), ['run'], {
      logFile: path.join(dir, 'bare.log'),
      env: { ...process.env, CADDY_ADMIN: `127.0.0.1:${adminPort}`, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    });
    await waitUntil(
      'bare caddy',
      async () => (await request(`http://127.0.0.1:${adminPort}/config/`)).statusCode === 200,
      {
        timeoutMs: 30_000,
        proc,
      },
    );
    return proc;
  }

  it('comes back empty after a restart, and serves again after ensureServer and a re-publish', async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-edge-'));
    const [adminPort, httpPort] = [await freePort(), await freePort()];
    caddy = (await startCaddy({ binary: toolBinary('caddy'), dir, adminPort, httpPort, bindIp: '127.0.0.1' })).proc;
    const own = createEdgeRouter({ adminUrl: `http://127.0.0.1:${adminPort}`, listen: [`127.0.0.1:${httpPort}`] });
    const d = newDeployment('restarted');
    const at = () => get(`http://127.0.0.1:${httpPort}/`, { host: d.host });
    await own.publish(d.id, d.host, [replicas[0]!.upstream]);
    expect(await at()).toMatchObject({ status: 200, body: 'one\n' });

    await caddy.stop();
    caddy = await bareCaddy(adminPort);
    const lost = await at().catch((err: { code?: string }) => err.code);
    await own.ensureServer();
    await own.ensureServer();
    const empty = await at();
    await own.publish(d.id, d.host, [replicas[0]!.upstream]);

    expect(lost).toBe('ECONNREFUSED');
    expect(empty.status).toBe(404);
    expect(await at()).toMatchObject({ status: 200, body: 'one\n' });
    expect(await own.list()).toHaveLength(1);
  });

  it('makes its server block on the first publish when nobody called ensureServer', async () => {
    const [adminPort, httpPort] = [await freePort(), await freePort()];
    await caddy?.stop();
    caddy = await bareCaddy(adminPort);
    const own = createEdgeRouter({ adminUrl: `http://127.0.0.1:${adminPort}`, listen: [`127.0.0.1:${httpPort}`] });
    const d = newDeployment('first');

    await own.publish(d.id, d.host, [replicas[1]!.upstream]);

    expect(await get(`http://127.0.0.1:${httpPort}/`, { host: d.host })).toMatchObject({ status: 200, body: 'two\n' });
    expect(await own.list()).toEqual([
      { deploymentId: d.id, host: d.host, state: 'published', upstreams: [replicas[1]!.upstream] },
    ]);
  });
});
