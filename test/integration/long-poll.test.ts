import { randomUUID } from 'node:crypto';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

type Body = Record<string, unknown> & { status?: string; code?: string };

describe('GET /compat/deployments/{id}?wait=…: one request instead of a polling loop', () => {
  let h: Harness;
  let hello: string;
  let slow: string;

  beforeAll(async () => {
    // Deploys of '127.0.0.1:1/…' fail at the pull (nothing listens there); without this the api refuses them.
    h = await startHarness('long-poll', { ALLOW_PRIVATE_REGISTRIES: 'true' });
    [hello, slow] = [await buildFixtureImage(h.docker, 'hello'), await buildFixtureImage(h.docker, 'slow-hello')];
  });
  afterAll(() => h?.stop());

  const deploy = async (api: ReturnType<typeof client>, image: string) => {
    const r = await api.post<Body>('/compat/deploy', { image, name: 'waited', port: 8080 });
    expect(r.status).toBe(202);
    return String(r.body.deploymentId);
  };

  it('answers once the deployment is running, in one request that counts as one read', async () => {
    const api = client(h, (await h.newOrg()).token);
    const id = await deploy(api, hello);
    const r = await api.get<Body>(`/compat/deployments/${id}?wait=running&timeout=60`);
    expect(r.status).toBe(200);
    expect(r.body.status).toBe('running');
    // The next read shows exactly one more read spent: the wait itself was one.
    const before = Number(r.headers.get('x-ratelimit-remaining'));
    const after = await api.get<Body>(`/compat/deployments/${id}`);
    expect(Number(after.headers.get('x-ratelimit-remaining'))).toBe(before - 1);
    await api.destroyAndWait(id);
  });

  it('waits the same way on the platform API, in its envelope', async () => {
    const api = client(h, (await h.newOrg()).token);
    const id = await deploy(api, hello);
    const r = await api.get<{ status: string; data: Body }>(`/platform/deployments/${id}?wait=running&timeout=60`);
    expect(r.status).toBe(200);
    expect([r.body.status, r.body.data.status]).toEqual(['success', 'running']);
    const bad = await api.get<{ status: string; message: string }>(`/platform/deployments/${id}?wait=sleeping`);
    expect(bad.status).toBe(400);
    expect(bad.body.status).toBe('error');
    await api.destroyAndWait(id);
  });

  it('answers with the status as it is when the timeout passes first', async () => {
    const api = client(h, (await h.newOrg()).token);
    // The app sleeps 6 s before it listens, so a 1 s wait for `running` ends on the timeout.
    const id = await deploy(api, slow);
    const r = await api.get<Body>(`/compat/deployments/${id}?wait=running&timeout=1`);
    expect(r.status).toBe(200);
    expect(['queued', 'deploying']).toContain(r.body.status);
    expect((await api.get<Body>(`/compat/deployments/${id}?wait=running&timeout=60`)).body.status).toBe('running');
    await api.destroyAndWait(id);
  });

  it('ends on a settled status other than the one asked for', async () => {
    const api = client(h, (await h.newOrg()).token);
    // Nothing listens on 127.0.0.1:1, so the pull fails and the deployment settles as failed.
    const r0 = await api.post<Body>('/compat/deploy', { image: `127.0.0.1:1/absent-${randomUUID()}:1`, name: 'nope' });
    const id = String(r0.body.deploymentId);
    const r = await api.get<Body>(`/compat/deployments/${id}?wait=running&timeout=60`);
    expect(r.body.status).toBe('failed');
  });

  it('refuses a bad wait or timeout with 400, and another organisation’s deployment with 404', async () => {
    const owner = client(h, (await h.newOrg()).token);
    const id = await deploy(owner, hello);
    for (const q of ['wait=sleeping', 'timeout=0', 'timeout=121', 'wait=running&timeout=x', 'wat=running']) {
      const r = await owner.get<Body>(`/compat/deployments/${id}?${q}`);
      expect({ q, status: r.status, code: r.body.code }).toEqual({ q, status: 400, code: 'INVALID_REQUEST' });
    }
    const stranger = client(h, (await h.newOrg()).token);
    const r = await stranger.get<Body>(`/compat/deployments/${id}?wait=running&timeout=5`);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('DEPLOYMENT_NOT_FOUND');
    await owner.destroyAndWait(id);
  });

  it('answers 404 when the deployment is destroyed while the request waits', async () => {
    const api = client(h, (await h.newOrg()).token);
    const id = await deploy(api, slow);
    const waiting = api.get<Body>(`/compat/deployments/${id}?wait=running&timeout=60`);
    await new Promise((r) => setTimeout(r, 300));
    expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    const r = await waiting;
    // Either the destroy won (404), or the wait saw the deployment settle first; never a stale running.
    expect(r.status).toBe(404);
  });
});
