import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import { request } from 'undici';

import { startCaddy } from '@scripts/stack/edge';
import { freePort, type Managed } from '@scripts/stack/process';
import { toolBinary } from '@scripts/stack/tools';
import { createEdgeRouter, deploymentHost, type EdgeRouter } from '@shared/edge';

/**
 * The release switch as the workflows make it: new instances, the route switched, the old ones drained. This file
 * runs its own Caddy, so no other file's config change (a reload of the whole router) lands among its requests.
 */

let dir: string;
let caddy: Managed;
let adminUrl: string;
let httpPort: number;
let router: EdgeRouter;
const servers: http.Server[] = [];

/** A local upstream answering its name after a short while, so requests are in flight when the route switches. */
async function upstream(name: string): Promise<string> {
  const server = http.createServer((_req, res) => {
    setTimeout(() => res.end(name), 20);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return `127.0.0.1:${(server.address() as { port: number }).port}`;
}

/** A GET on a connection of its own (Connection: close): what a client opening one per request sees. */
function freshGet(host: string): Promise<{ status: number | string; body: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port: httpPort, path: '/', agent: false, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? err.message, body }));
    });
    // A connection closed without an answer (ECONNRESET, "socket hang up") is what a reload costs a client.
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? err.message, body: '' }));
  });
}

/**
 * A GET after a change that reloaded the router's config: a reload may close a connection it had just accepted, which
 * a client sends again (docs/architecture.md, "Edge router"); only that is tried again, never a wrong answer.
 */
async function getAfterReload(host: string): Promise<{ status: number | string; body: string }> {
  for (let attempt = 0; ; attempt++) {
    const answer = await freshGet(host);
    if (typeof answer.status === 'number' || attempt === 9) return answer;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const config = async () => (await request(`${adminUrl}/config/`, { reset: true })).body.text();
const newDeployment = (name: string) => {
  const id = randomUUID();
  return { id, host: deploymentHost(name, id, 'localhost') };
};

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-edge-switch-'));
  const [adminPort, port] = [await freePort(), await freePort()];
  httpPort = port;
  ({ proc: caddy, adminUrl } = await startCaddy({
    binary: toolBinary('caddy'),
    dir,
    adminPort,
    httpPort,
    bindIp: '127.0.0.1',
  }));
  router = createEdgeRouter({
    adminUrl,
    listen: [`127.0.0.1:${httpPort}`],
    upstreamsDir: path.join(dir, 'upstreams'),
  });
});

afterAll(async () => {
  await caddy?.stop();
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
  if (dir) await fs.rm(dir, { recursive: true, force: true });
});

describe('a release switch through upstream files (real Caddy)', () => {
  it('switches to another upstream with the router config byte for byte unchanged', async () => {
    const [one, two] = [await upstream('one'), await upstream('two')];
    const d = newDeployment('same-config');
    await router.publish(d.id, d.host, [one]);
    const before = await config();

    await router.publish(d.id, d.host, [two]);

    expect(await config()).toBe(before);
    expect(await freshGet(d.host)).toEqual({ status: 200, body: 'two' });
    expect(await router.list()).toContainEqual({
      deploymentId: d.id,
      host: d.host,
      state: 'published',
      upstreams: [two],
    });
    await router.unpublish(d.id);
  });

  it('drops no request of 3 clients polling on fresh connections across 40 switches', async () => {
    const [one, two] = [await upstream('one'), await upstream('two')];
    const d = newDeployment('no-drop');
    await router.publish(d.id, d.host, [one]);
    const answers: { status: number | string; body: string }[] = [];
    let polling = true;
    const clients = [0, 1, 2].map(async () => {
      while (polling) {
        answers.push(await freshGet(d.host));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    });
    const afterPolls = async (n: number) => {
      const until = answers.length + n;
      while (answers.length < until) await new Promise((resolve) => setTimeout(resolve, 5));
    };

    for (let i = 1; i <= 40; i++) {
      await router.publish(d.id, d.host, [i % 2 ? two : one]);
      await afterPolls(6);
    }
    polling = false;
    await Promise.all(clients);

    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(new Set(answers.map((a) => a.body))).toEqual(new Set(['one', 'two']));
    expect(answers.length).toBeGreaterThanOrEqual(40 * 6);
    expect(await freshGet(d.host)).toEqual({ status: 200, body: 'one' });
    await router.unpublish(d.id);
  });

  it("does not hold an instance's failures against the one that replaced it", async () => {
    const closed = await freePort();
    const [one] = [await upstream('one')];
    const d = newDeployment('fails');
    await router.publish(d.id, d.host, [`127.0.0.1:${closed}`]);
    expect((await freshGet(d.host)).status).toBe(502);

    await router.publish(d.id, d.host, [one]);

    // Health kept per `{file.…}` dial would leave the only upstream out for its fail duration: 503.
    expect(await freshGet(d.host)).toEqual({ status: 200, body: 'one' });
    await router.unpublish(d.id);
  });

  it('changes the config when the replica count changes, and spreads over the new replicas', async () => {
    const [one, two] = [await upstream('one'), await upstream('two')];
    const d = newDeployment('scaled');
    await router.publish(d.id, d.host, [one]);
    const single = await config();

    // A replica count change is a config change, so a reload: the requests after it are sent again if it closed them.
    await router.publish(d.id, d.host, [one, two]);
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) seen.add((await getAfterReload(d.host)).body);
    const double = await config();
    await router.publish(d.id, d.host, [two]);

    expect(double).not.toBe(single);
    expect(seen).toEqual(new Set(['one', 'two']));
    expect(await config()).toBe(single);
    for (let i = 0; i < 4; i++) expect(await getAfterReload(d.host)).toEqual({ status: 200, body: 'two' });
    expect(await router.list()).toContainEqual({
      deploymentId: d.id,
      host: d.host,
      state: 'published',
      upstreams: [two],
    });
    expect(await fs.readdir(path.join(dir, 'upstreams', d.id))).toEqual(['0']);
    await router.unpublish(d.id);
  });

  it('stops and starts with the same replica count without a config change', async () => {
    const [one, two] = [await upstream('one'), await upstream('two')];
    const d = newDeployment('paused');
    await router.publish(d.id, d.host, [one, two]);
    const running = await config();

    await router.showStopped(d.id, d.host);
    const stopped = await freshGet(d.host);
    const whileStopped = await config();
    await router.showStopped(d.id, d.host);
    await router.publish(d.id, d.host, [two, one]);

    expect(stopped.status).toBe(503);
    expect(stopped.body).toContain(`The deployment at ${d.host} is stopped`);
    expect(whileStopped).toBe(running);
    expect(await config()).toBe(running);
    expect((await freshGet(d.host)).status).toBe(200);
    await router.unpublish(d.id);
    expect((await freshGet(d.host)).status).toBe(404);
    await expect(fs.stat(path.join(dir, 'upstreams', d.id))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('puts back the files a running deployment lost, and the route a restarted router lost, never undoing a switch', async () => {
    const [one, two] = [await upstream('one'), await upstream('two')];
    const d = newDeployment('restored');
    await router.publish(d.id, d.host, [one, two]);
    await fs.rm(path.join(dir, 'upstreams', d.id), { recursive: true });
    const lost = await freshGet(d.host);

    const restored = await router.restore([{ deploymentId: d.id, host: d.host, upstreams: [one, two] }]);
    const again = await router.restore([{ deploymentId: d.id, host: d.host, upstreams: [two, two] }]);
    await router.unpublish(d.id);
    await fs.mkdir(path.join(dir, 'upstreams', d.id));
    await fs.writeFile(path.join(dir, 'upstreams', d.id, '0'), `${two}\n`);
    const readded = await router.restore([{ deploymentId: d.id, host: d.host, upstreams: [one] }]);
    const stopped = newDeployment('restored-stopped');
    const stoppedBack = await router.restore([{ deploymentId: stopped.id, host: stopped.host, upstreams: [] }]);

    expect(lost.status).not.toBe(200);
    expect(restored).toEqual([{ deploymentId: d.id, route: false, files: [0, 1] }]);
    expect(again).toEqual([]);
    expect(readded).toEqual([{ deploymentId: d.id, route: true, files: [] }]);
    // Both routes were added back, each a reload.
    expect(await getAfterReload(d.host)).toEqual({ status: 200, body: 'two' });
    expect(stoppedBack).toEqual([{ deploymentId: stopped.id, route: true, files: [] }]);
    expect((await getAfterReload(stopped.host)).status).toBe(503);
    await router.unpublish(d.id);
    await router.unpublish(stopped.id);
  });

  it('keeps upstreams in the config, as before, for a router without an upstreams directory', async () => {
    const [one, two] = [await upstream('one'), await upstream('two')];
    const plain = createEdgeRouter({ adminUrl, listen: [`127.0.0.1:${httpPort}`] });
    const d = newDeployment('plain');
    await plain.publish(d.id, d.host, [one]);
    const before = await config();

    await plain.publish(d.id, d.host, [two]);

    expect(await config()).not.toBe(before);
    expect(await config()).toContain(two);
    // Without an upstreams directory every switch is a reload.
    expect(await getAfterReload(d.host)).toEqual({ status: 200, body: 'two' });
    await plain.showStopped(d.id, d.host);
    expect((await getAfterReload(d.host)).status).toBe(503);
    await plain.unpublish(d.id);
  });
});
