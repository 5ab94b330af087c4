import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { createEngineVolumes } from '@activities/providers/engine-volumes';
import { LABELS } from '@shared/constants';
import { instanceId } from '@shared/instance';
import { PERMISSIONS } from '@shared/permissions';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { readResult } from '../helpers/mcp';

type Body = Record<string, unknown>;
interface VolumeBody {
  data: { id: string; name: string; sizeGb: number; projectId: string | null; status: string; error: string | null };
}
interface ListBody {
  data: { volumes: { id: string; name: string }[]; total: number };
}

/**
 * Volumes as the api keeps them: records, names, plan limits, who sees what, and the MCP tools. The storage the
 * volume's workflow makes is tested where that workflow is (no worker runs here).
 */
describe('persistent volumes: the api', () => {
  let h: Harness;
  const mcpClients: Client[] = [];
  beforeAll(async () => {
    h = await startHarness(
      'volumes-api',
      { RATE_LIMIT_PLATFORM_PER_15MIN: '100000', DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS: '500' },
      { worker: false },
    );
  });
  afterAll(async () => {
    for (const c of mcpClients) await c.close().catch(() => undefined);
    await h?.stop();
  });

  it('creates a volume that reads creating, lists it by name, and refuses a second of the same name', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const created = await api.post<VolumeBody>('/platform/volumes', { name: 'pg-data', sizeGb: 2 });
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'pg-data', sizeGb: 2, projectId: null, status: 'creating' });
    const id = created.body.data.id;

    const read = await api.get<VolumeBody>(`/platform/volumes/${id}`);
    expect(read.status).toBe(200);
    expect(read.body.data).toMatchObject({ id, name: 'pg-data', status: 'creating', error: null });

    await api.post('/platform/volumes', { name: 'cache', sizeGb: 1 });
    const list = await api.get<ListBody>('/platform/volumes');
    expect(list.body.data.volumes.map((v) => v.name)).toEqual(['cache', 'pg-data']);
    expect(list.body.data.total).toBe(2);

    const again = await api.post<{ message: string }>('/platform/volumes', { name: 'pg-data', sizeGb: 1 });
    expect(again.status).toBe(409);
    expect(again.body.message).toContain('A volume named pg-data exists in this organisation');
  });

  it('refuses a size that is not whole gigabytes, a name that is not a DNS label, and unknown fields', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    for (const body of [
      { name: 'a', sizeGb: 0.5 },
      { name: 'a', sizeGb: 0 },
      { name: 'a', sizeGb: 16_385 },
      { name: 'Not A Label', sizeGb: 1 },
      { name: 'a', sizeGb: 1, mountPath: '/data' },
    ]) {
      const r = await api.post<{ message: string }>('/platform/volumes', body);
      expect([body, r.status]).toEqual([body, 400]);
      expect(r.body.message).toMatch(/^Invalid body/);
    }
  });

  it("holds the organisation to its plan's volume count and total size, naming both", async () => {
    const api = client(h, (await h.newOrg('free')).token);
    // Free: 2 volumes, 5 GB in all.
    const tooBig = await api.post<{ message: string; code: string }>('/platform/volumes', { name: 'big', sizeGb: 6 });
    expect(tooBig.status).toBe(429);
    expect(tooBig.body.message).toContain('The free plan allows 2 volumes of 5 GB in all');
    expect((await api.post('/platform/volumes', { name: 'one', sizeGb: 3 })).status).toBe(201);
    const past = await api.post<{ message: string }>('/platform/volumes', { name: 'two', sizeGb: 3 });
    expect(past.status).toBe(429);
    expect(past.body.message).toContain('this organisation has 1 of 3 GB');
    expect((await api.post('/platform/volumes', { name: 'two', sizeGb: 2 })).status).toBe(201);
    const third = await api.post<{ message: string }>('/platform/volumes', { name: 'three', sizeGb: 1 });
    expect(third.status).toBe(429);
  });

  it('holds the plan under concurrent creations: never more than it allows', async () => {
    const api = client(h, (await h.newOrg('free')).token);
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => api.post('/platform/volumes', { name: `v${i}`, sizeGb: 1 })),
    );
    expect(answers.filter((r) => r.status === 201)).toHaveLength(2);
    expect(answers.filter((r) => r.status === 429)).toHaveLength(4);
    expect((await api.get<ListBody>('/platform/volumes')).body.data.total).toBe(2);
  });

  it("keeps a project's volumes to those who may see the project; another organisation's is 404", async () => {
    const org = await h.newOrg('pro');
    const owner = client(h, org.token);
    const project = await owner.post<{ data: { id: string } }>('/platform/projects', { name: `p-${randomUUID()}` });
    const projectId = project.body.data.id;
    const inProject = await owner.post<VolumeBody>('/platform/volumes', { name: 'proj-data', sizeGb: 1, projectId });
    expect(inProject.status).toBe(201);
    expect(inProject.body.data.projectId).toBe(projectId);
    const orgWide = await owner.post<VolumeBody>('/platform/volumes', { name: 'org-data', sizeGb: 1 });

    // A developer of the organisation who is not a member of the project.
    const user = await h.identity.addUser({
      orgId: org.orgId,
      email: `dev-${randomUUID()}@example.com`,
      role: 'developer',
    });
    const dev = client(
      h,
      (await h.identity.createToken({ orgId: org.orgId, userId: user._id, name: 'dev', scopes: [...PERMISSIONS] }))
        .token,
    );
    expect((await dev.get<ListBody>('/platform/volumes')).body.data.volumes.map((v) => v.name)).toEqual(['org-data']);
    expect((await dev.get(`/platform/volumes/${inProject.body.data.id}`)).status).toBe(404);
    expect((await dev.get(`/platform/volumes/${orgWide.body.data.id}`)).status).toBe(200);
    expect((await dev.post('/platform/volumes', { name: 'sneak', sizeGb: 1, projectId })).status).toBe(404);
    expect((await owner.get<ListBody>(`/platform/volumes?projectId=${projectId}`)).body.data.volumes).toEqual([
      expect.objectContaining({ name: 'proj-data' }),
    ]);

    const other = client(h, (await h.newOrg('pro')).token);
    for (const r of [
      await other.get(`/platform/volumes/${inProject.body.data.id}`),
      await other.del(`/platform/volumes/${orgWide.body.data.id}`),
      await other.post('/platform/volumes', { name: 'steal', sizeGb: 1, projectId }),
    ])
      expect(r.status).toBe(404);
    expect((await other.get<ListBody>('/platform/volumes')).body.data.total).toBe(0);
    expect((await owner.get<VolumeBody>(`/platform/volumes/${orgWide.body.data.id}`)).body.data.status).toBe(
      'creating',
    );
  });

  it('answers a delete with the volume deleting, and keeps it in the audit trail', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const { id } = (await api.post<VolumeBody>('/platform/volumes', { name: 'gone-soon', sizeGb: 1 })).body.data;
    const del = await api.del<VolumeBody>(`/platform/volumes/${id}`);
    expect(del.status).toBe(202);
    expect(del.body.data).toMatchObject({ id, status: 'deleting' });
    const trail = await api.get<{ data: { events: { action: string; resource: { id: string | null } }[] } }>(
      '/platform/audit',
    );
    const actions = trail.body.data.events.filter((e) => e.resource.id === id).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['volume.create', 'volume.delete']));
  });

  it('creates and lists volumes through MCP, as an agent calls the tools', async () => {
    const org = await h.newOrg('pro');
    const c = new Client({ name: 'volumes-test', version: '1.0.0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${org.token}` } },
      }),
    );
    mcpClients.push(c);
    // Listed first, so the client checks each answer against the tool's output schema.
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['create_volume', 'list_volumes']));
    const call = async (name: string, args: Body) =>
      readResult((await c.callTool({ name, arguments: args })) as CallToolResult);

    const made = await call('create_volume', { name: 'agent-data', sizeGb: 1 });
    expect(made.isError).toBe(false);
    expect(made.s.volume).toMatchObject({ name: 'agent-data', sizeGb: 1, status: 'creating' });
    const listed = await call('list_volumes', {});
    expect(listed.s).toMatchObject({ total: 1, volumes: [expect.objectContaining({ id: made.s.volume.id })] });
    const dup = await call('create_volume', { name: 'agent-data', sizeGb: 1 });
    expect(dup.isError).toBe(true);
    // MCP speaks the interface's codes: a conflict reads INVALID_REQUEST, its message says what to do.
    expect(dup.s.code).toBe('INVALID_REQUEST');
    expect(dup.s.message).toContain('choose another name');
  });
});

describe('persistent volumes: the api with a worker', () => {
  let h: Harness;
  let dir: string;
  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-volumes-api-'));
    h = await startHarness('volumes-api-worker', { VOLUMES_DIR: dir });
  });
  afterAll(async () => {
    await h?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  it('reads ready once its storage is made, and after a delete is gone with its storage', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    const { id } = (await api.post<VolumeBody>('/platform/volumes', { name: 'app-data', sizeGb: 1 })).body.data;
    const ready = await eventually(async () => {
      const r = await api.get<VolumeBody>(`/platform/volumes/${id}`);
      return r.body.data.status === 'ready' ? r.body.data : undefined;
    }, 'the volume ready');
    expect(ready).toMatchObject({ id, sizeGb: 1, error: null });
    const image = path.join(dir, instanceId(h.config), `${id}.img`);
    expect((await fs.stat(image)).size).toBe(1024 ** 3);

    expect((await api.del<VolumeBody>(`/platform/volumes/${id}`)).status).toBe(202);
    await eventually(
      async () => ((await api.get(`/platform/volumes/${id}`)).status === 404 ? true : undefined),
      'the volume gone',
    );
    await expect(fs.stat(image)).rejects.toMatchObject({ code: 'ENOENT' });
    // Its name is free again; the new volume is deleted too, so nothing stays mounted after the test.
    const again = await api.post<VolumeBody>('/platform/volumes', { name: 'app-data', sizeGb: 1 });
    expect(again.status).toBe(201);
    await eventually(async () => {
      const r = await api.get<VolumeBody>(`/platform/volumes/${again.body.data.id}`);
      return r.body.data.status === 'ready' ? true : undefined;
    }, 'the second volume ready');
    expect((await api.del(`/platform/volumes/${again.body.data.id}`)).status).toBe(202);
    await eventually(
      async () => ((await api.get(`/platform/volumes/${again.body.data.id}`)).status === 404 ? true : undefined),
      'the second volume gone',
    );
  });

  it('deletes on a later request after one refused while a container still mounted it', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const { id } = (await api.post<VolumeBody>('/platform/volumes', { name: 'in-use', sizeGb: 1 })).body.data;
    await eventually(async () => {
      const r = await api.get<VolumeBody>(`/platform/volumes/${id}`);
      return r.body.data.status === 'ready' ? true : undefined;
    }, 'the volume ready');
    const storage = createEngineVolumes({ docker: h.docker, instance: instanceId(h.config), dir });
    const container = await h.docker.createContainer({
      Image: await buildFixtureImage(h.docker, 'hello'),
      Entrypoint: ['/bin/busybox'],
      Cmd: ['true'],
      Labels: { [LABELS.orgId]: org.orgId },
      HostConfig: { NetworkMode: 'none', Mounts: [storage.mountSpec({ volumeId: id, orgId: org.orgId }, '/data')] },
    });
    try {
      const first = await api.call('DELETE', `/platform/volumes/${id}`, undefined, { 'x-request-id': `del-${id}-1` });
      expect(first.status).toBe(202);
      // The workflow refused it: the container still names the volume.
      const refused = await h.temporal.workflow
        .getHandle(`volume/${id}`)
        .getUpdateHandle(`delete:del-${id}-1`)
        .result()
        .catch((err: unknown) => err);
      expect(String((refused as Error).cause ?? refused)).toMatch(/still mounted by container/);
      expect((await api.get<VolumeBody>(`/platform/volumes/${id}`)).body.data.status).toBe('ready');
    } finally {
      await container.remove({ force: true });
    }
    const second = await api.call('DELETE', `/platform/volumes/${id}`, undefined, { 'x-request-id': `del-${id}-2` });
    expect(second.status).toBe(202);
    await eventually(
      async () => ((await api.get(`/platform/volumes/${id}`)).status === 404 ? true : undefined),
      'the volume gone after the second delete',
    );
  });
});
