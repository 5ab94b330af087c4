import { randomUUID } from 'node:crypto';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { createProjectStore } from '@shared/projects/store';

import { baseImageEnv } from '../helpers/base-images';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { readResult } from '../helpers/mcp';

type Api = ReturnType<typeof client>;
interface Published {
  sessionId: string;
  checkpointId: string;
  deploymentId: string;
  url: string;
  created: boolean;
  uploadId: string | null;
  deployment: { id: string; status: string; projectId: string | null };
  statusUrl: string;
  command: { id: string; name: string; url: string } | null;
}
type Answer<T> = { data: T; status?: string; message?: string };

/**
 * Publishing a builder session: what the session's head holds is what ships, first as a new deployment, then as new
 * releases of it at the same URL; one deployment however many publish at once.
 */
describe('builder publish', () => {
  let h: Harness;
  const clients: Client[] = [];

  beforeAll(async () => {
    const base = await baseImageEnv();
    h = await startHarness('builder-publish', {
      ...base,
      DEPLOY_READY_TIMEOUT_S: '20',
      RATE_LIMIT_PLATFORM_PER_15MIN: '10000',
    });
  }, 300_000);
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await h?.stop();
  });

  async function newSession(api: Api, projectId: string, title = 'Shop Front') {
    const r = await api.post<Answer<{ id: string }>>('/platform/builder/sessions', { projectId, title });
    expect(r.status).toBe(200);
    return r.body.data.id;
  }

  const save = async (api: Api, id: string, files: Record<string, string | null>) => {
    const r = await api.call<Answer<{ checkpoint: { id: string } }>>('PUT', `/platform/builder/sessions/${id}/files`, {
      files: Object.entries(files).map(([path, content]) =>
        content === null ? { path, delete: true } : { path, content },
      ),
    });
    expect(r.status).toBe(200);
    return r.body.data.checkpoint.id;
  };

  const publish = (api: Api, id: string, body: Record<string, unknown> = {}) =>
    api.post<Answer<Published>>(`/platform/builder/sessions/${id}/publish`, body);

  const running = (api: Api, id: string) =>
    eventually(
      async () => {
        const d = (await api.get<Answer<{ status: string; url: string }>>(`/platform/deployments/${id}`)).body.data;
        return ['running', 'failed'].includes(d.status) ? d : undefined;
      },
      `deployment ${id} to settle`,
      300_000,
    );

  const settled = (api: Api, url: string) =>
    eventually(
      async () => {
        const p = await api.get<Answer<{ state: string; outcome?: { revision: number } }>>(
          new URL(url, h.baseUrl).pathname,
        );
        return p.body.data.state === 'running' ? undefined : p.body.data;
      },
      `the command ${url} to end`,
      300_000,
    );

  const get = async (url: string) => {
    const r = await fetch(url);
    return { status: r.status, text: (await r.text()).trim() };
  };

  it('publishes the head as a new deployment, then a changed head as a new release at the same URL', async () => {
    const { token, projectId } = await h.newOrgWithProject();
    const api = client(h, token);
    const id = await newSession(api, projectId);
    const first = await save(api, id, { 'index.html': '<h1>version one</h1>', 'about.html': 'about us' });

    const r1 = await publish(api, id);
    expect(r1.status).toBe(202);
    const one = r1.body.data;
    expect(one).toMatchObject({
      sessionId: id,
      checkpointId: first,
      created: true,
      command: null,
      deployment: { id: one.deploymentId, projectId },
      statusUrl: expect.stringMatching(new RegExp(`/platform/deployments/${one.deploymentId}$`)),
    });
    // The URL is known at once, before the first release runs, and is the one it then runs at.
    expect(one.url).toMatch(/^http:\/\/shop-front-[a-z0-9]+\.localhost:\d+$/);
    expect(await running(api, one.deploymentId)).toMatchObject({ status: 'running', url: one.url });
    expect(await get(one.url)).toEqual({ status: 200, text: '<h1>version one</h1>' });
    expect(await get(`${one.url}/about.html`)).toEqual({ status: 200, text: 'about us' });

    // A change: one file edited, one deleted, one added, as a new checkpoint.
    const second = await save(api, id, { 'index.html': '<h1>version two</h1>', 'about.html': null, 'new.html': 'new' });
    const r2 = await publish(api, id);
    expect(r2.status).toBe(202);
    const two = r2.body.data;
    expect(two).toMatchObject({
      checkpointId: second,
      deploymentId: one.deploymentId,
      url: one.url,
      created: false,
      command: { name: 'redeploy' },
    });
    expect(two.uploadId).not.toBe(one.uploadId);
    expect(await settled(api, two.command!.url)).toMatchObject({ state: 'succeeded', outcome: { revision: 2 } });
    // Exactly the second checkpoint's files, at the same URL.
    expect(await get(one.url)).toEqual({ status: 200, text: '<h1>version two</h1>' });
    expect(await get(`${one.url}/new.html`)).toEqual({ status: 200, text: 'new' });
    expect((await get(`${one.url}/about.html`)).status).toBe(404);

    // One deployment in the project, and one creation spent for it.
    const list = await api.get<Answer<{ deployments: { id: string }[] }>>(
      `/platform/deployments?projectId=${projectId}`,
    );
    expect(list.body.data.deployments.map((d) => d.id)).toEqual([one.deploymentId]);
    const me =
      await api.get<Answer<{ limits: { deployCreate: { remaining: number; limit: number } } }>>(
        '/platform/tokens/current',
      );
    expect(me.body.data.limits.deployCreate.limit - me.body.data.limits.deployCreate.remaining).toBe(1);

    // Naming another deployment than the session's own is refused; nothing changes.
    const other = await publish(api, id, { deploymentId: randomUUID() });
    expect([other.status, other.body.message]).toEqual([409, expect.stringContaining(one.deploymentId)]);

    // Once the deployment is destroyed, the next publish makes a new one (at a new URL).
    await api.destroyAndWait(one.deploymentId);
    const r3 = await publish(api, id);
    expect(r3.status).toBe(202);
    expect(r3.body.data).toMatchObject({ created: true, checkpointId: second });
    expect(r3.body.data.deploymentId).not.toBe(one.deploymentId);
    expect(await running(api, r3.body.data.deploymentId)).toMatchObject({ status: 'running' });
    expect(await get(r3.body.data.url)).toEqual({ status: 200, text: '<h1>version two</h1>' });
    await api.destroyAndWait(r3.body.data.deploymentId);
  }, 600_000);

  it('makes one deployment of concurrent first publishes', async () => {
    const { token, projectId } = await h.newOrgWithProject();
    const api = client(h, token);
    const id = await newSession(api, projectId, 'Raced');
    await save(api, id, { 'index.html': 'raced' });

    const all = await Promise.all([1, 2, 3].map(() => publish(api, id)));
    expect(all.map((r) => r.status)).toEqual([202, 202, 202]);
    const ids = new Set(all.map((r) => r.body.data.deploymentId));
    expect(ids.size).toBe(1);
    expect(all.filter((r) => r.body.data.created)).toHaveLength(1);
    const [deploymentId] = [...ids];
    const list = await api.get<Answer<{ total: number }>>(`/platform/deployments?projectId=${projectId}`);
    expect(list.body.data.total).toBe(1);
    expect(await running(api, deploymentId!)).toMatchObject({ status: 'running' });
    await api.destroyAndWait(deploymentId!);
  }, 300_000);

  it("answers another organisation's session (and one of a project the caller is not in) 404, a viewer 403, and a session with no files 400, deploying nothing", async () => {
    const owner = await h.newOrgWithProject();
    const api = client(h, owner.token);
    const id = await newSession(api, owner.projectId);

    const empty = await publish(api, id);
    expect([empty.status, empty.body.message]).toEqual([400, expect.stringMatching(/no files to publish/)]);

    await save(api, id, { 'index.html': 'mine' });
    const stranger = client(h, (await h.newOrgWithProject()).token);
    const foreign = await publish(stranger, id);
    expect([foreign.status, foreign.body.message]).toEqual([404, `No builder session ${id} in this organisation.`]);
    expect((await publish(stranger, randomUUID())).status).toBe(404);

    // In the organisation but not in the project: the same 404. A viewer of the project may read, not publish.
    const outsider = await h.identity.addUser({
      orgId: owner.orgId,
      email: `${randomUUID()}@x.invalid`,
      role: 'developer',
    });
    const outsiderToken = await h.identity.createToken({
      orgId: owner.orgId,
      userId: outsider._id,
      name: 't',
      scopes: [],
    });
    expect((await publish(client(h, outsiderToken.token), id)).status).toBe(404);
    await createProjectStore(h.db).addMember({
      projectId: owner.projectId,
      orgId: owner.orgId,
      userId: outsider._id,
      role: 'viewer',
      addedAt: new Date(),
      addedBy: owner.userId,
    });
    const viewer = await publish(client(h, outsiderToken.token), id);
    expect([viewer.status, viewer.body.message]).toEqual([403, expect.stringMatching(/viewer/)]);

    const list = await api.get<Answer<{ total: number }>>('/platform/deployments');
    expect(list.body.data.total).toBe(0);
  });

  it('publish_builder_session through the SDK client: a new deployment, then a new release waited on', async () => {
    const { token, projectId } = await h.newOrgWithProject();
    const api = client(h, token);
    const id = await newSession(api, projectId, 'Agent App');
    await save(api, id, { 'index.html': 'from agent v1' });
    const mcp = new Client({ name: 'builder-publish-test', version: '1.0.0' });
    clients.push(mcp);
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    await mcp.listTools();
    const call = async (args: Record<string, unknown>) =>
      readResult(
        (await mcp.callTool({ name: 'publish_builder_session', arguments: args }, undefined, {
          timeout: 120_000,
        })) as CallToolResult,
      );

    const first = await call({ sessionId: id, waitS: 55 });
    expect(first).toMatchObject({
      isError: false,
      s: { sessionId: id, created: true, settled: true, deployment: { status: 'running' } },
    });
    const url = first.s.url as string;
    expect(await get(url)).toEqual({ status: 200, text: 'from agent v1' });

    await save(api, id, { 'index.html': 'from agent v2' });
    const second = await call({ sessionId: id, waitS: 55 });
    expect(second).toMatchObject({
      isError: false,
      s: { created: false, deploymentId: first.s.deploymentId, url, state: 'succeeded', revision: 2 },
    });
    expect(await get(url)).toEqual({ status: 200, text: 'from agent v2' });

    const stranger = new Client({ name: 'builder-publish-test', version: '1.0.0' });
    clients.push(stranger);
    await stranger.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${(await h.newOrg()).token}` } },
      }),
    );
    const foreign = readResult(
      (await stranger.callTool({ name: 'publish_builder_session', arguments: { sessionId: id } })) as CallToolResult,
    );
    // MCP speaks the compat codes: a session not found is INVALID_REQUEST, its message the REST 404's.
    expect(foreign).toMatchObject({
      isError: true,
      s: { code: 'INVALID_REQUEST', message: `No builder session ${id} in this organisation.` },
    });
    await api.destroyAndWait(first.s.deploymentId as string);
  }, 600_000);
});
