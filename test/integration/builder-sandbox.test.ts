import { randomUUID } from 'node:crypto';

import { APP_UID } from '@shared/build/base-images';
import { createSandboxStore, previewRouteKey } from '@shared/builder/sandbox-store';
import { edgeRouterFromConfig } from '@shared/edge';
import { createProjectStore } from '@shared/projects/store';

import { openai, type ProviderDouble, startOpenAiDouble } from '../helpers/ai-doubles';
import { client } from '../helpers/client';
import { edgeAgent, edgeGet } from '../helpers/edge';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { processUids } from '../helpers/processes';

type Data<T> = { data: T; message?: string };
interface SandboxBody {
  status: string;
  previewUrl: string;
  appliedCheckpointId: string | null;
  headCheckpointId: string | null;
  inSync: boolean;
  containerId: string | null;
  lastAction: string | null;
  error: string | null;
}
interface SyncBody {
  sync: { status: string; action: string; copied: number; deleted: number; containerId: string; error: string | null };
  sandbox: SandboxBody;
}
/** What the sync route and its follow-up answer: the sync running (202, then GET url) or ended. */
interface Progress {
  id: string;
  state: 'running' | 'ended';
  url: string;
  sync: SyncBody['sync'] | null;
  sandbox: SandboxBody;
}

/** POST …/sandbox/sync, then GET its url while it runs: the ended sync, however long it took. */
async function syncToEnd(api: ReturnType<typeof client>, id: string): Promise<Progress & SyncBody> {
  const r = await api.post<Data<Progress>>(`/platform/builder/sessions/${id}/sandbox/sync`, {});
  expect([r.status, r.body.message]).toEqual([r.body.data?.state === 'running' ? 202 : 200, undefined]);
  let progress = r.body.data;
  while (progress.state === 'running') {
    const next = await api.get<Data<Progress>>(progress.url);
    expect([next.status, next.body.data.id]).toEqual([200, r.body.data.id]);
    progress = next.body.data;
  }
  return progress as Progress & SyncBody;
}

/** The live preview of builder sessions on the real stack: engine, edge router, Temporal, S3, FerretDB. */
describe('builder sandbox', () => {
  let h: Harness;
  const agent = edgeAgent();
  const sessions: string[] = [];

  beforeAll(async () => {
    h = await startHarness('builder-sandbox', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      SANDBOX_IDLE_S: '600',
      ALLOW_PRIVATE_AI_PROVIDERS: 'true',
    });
  });
  afterAll(async () => {
    const edge = edgeRouterFromConfig(h.config);
    for (const id of sessions) await edge.unpublish(previewRouteKey(id)).catch(() => undefined);
    await h?.stop();
    await agent.close();
  });

  async function newSession() {
    const o = await h.newOrgWithProject();
    const { projectId } = o;
    const api = client(h, o.token);
    const created = await api.post<Data<{ id: string }>>('/platform/builder/sessions', { projectId });
    expect(created.status).toBe(200);
    sessions.push(created.body.data.id);
    return { api, id: created.body.data.id, orgId: o.orgId };
  }

  const save = async (api: ReturnType<typeof client>, id: string, files: Record<string, string>) => {
    const r = await api.call<Data<{ checkpoint: { id: string } }>>('PUT', `/platform/builder/sessions/${id}/files`, {
      files: Object.entries(files).map(([path, content]) => ({ path, content })),
    });
    expect([r.status, r.body.message]).toEqual([200, undefined]);
    return r.body.data.checkpoint.id;
  };
  const sync = async (api: ReturnType<typeof client>, id: string) => {
    const ended = await syncToEnd(api, id);
    expect(ended.sync.error).toBeNull();
    return ended;
  };
  const preview = (url: string) => edgeGet(url, { agent });

  it('serves a saved index.html at the preview URL, then syncs one changed file by copy into the same container', async () => {
    const { api, id } = await newSession();
    const first = await save(api, id, { 'index.html': '<h1>first version</h1>', 'about.html': 'about' });
    const configured = await api.call<Data<SandboxBody>>('PUT', `/platform/builder/sessions/${id}/sandbox`, {
      runtime: 'static',
    });
    expect(configured.status).toBe(200);
    expect(configured.body.data).toMatchObject({ status: 'configured', inSync: false, headCheckpointId: first });

    const one = await sync(api, id);
    expect(one.sync).toMatchObject({ status: 'running', action: 'recreate', copied: 2 });
    expect(one.sandbox).toMatchObject({ inSync: true, appliedCheckpointId: first, headCheckpointId: first });
    expect(one.sandbox.previewUrl).toMatch(/^http:\/\/preview-[0-9a-f]{12}\.localhost:\d+$/);
    expect(await preview(one.sandbox.previewUrl)).toMatchObject({ status: 200, body: '<h1>first version</h1>' });

    const second = await save(api, id, { 'index.html': '<h1>second version</h1>' });
    const two = await sync(api, id);
    // Copied, not rebuilt: the same container holds the new file.
    expect(two.sync).toMatchObject({ action: 'copy', copied: 1, deleted: 0, containerId: one.sync.containerId });
    expect(two.sandbox).toMatchObject({ inSync: true, appliedCheckpointId: second, headCheckpointId: second });
    expect((await h.docker.getContainer(one.sync.containerId).inspect()).State.Running).toBe(true);
    expect(await preview(two.sandbox.previewUrl)).toMatchObject({ status: 200, body: '<h1>second version</h1>' });
    // The session's own response says the same.
    const session = await api.get<Data<{ sandbox: Record<string, unknown> | null }>>(
      `/platform/builder/sessions/${id}`,
    );
    expect(session.body.data.sandbox).toMatchObject({ inSync: true, appliedCheckpointId: second });

    // A save the preview has not seen yet reads as out of sync.
    const third = await save(api, id, { 'about.html': 'about us' });
    const after = await api.get<Data<{ sandbox: Record<string, unknown> | null }>>(`/platform/builder/sessions/${id}`);
    expect(after.body.data.sandbox).toMatchObject({
      inSync: false,
      appliedCheckpointId: second,
      headCheckpointId: third,
    });
    const stale = await api.call<Data<SandboxBody>>('PUT', `/platform/builder/sessions/${id}/sandbox`, {
      runtime: 'static',
    });
    expect(stale.body.data).toMatchObject({ inSync: false, appliedCheckpointId: second });
  });

  it('recreates a killed sandbox container on the next sync, with every file', async () => {
    const { api, id } = await newSession();
    await save(api, id, { 'index.html': 'alive', 'css/site.css': 'body{}' });
    await api.call('PUT', `/platform/builder/sessions/${id}/sandbox`, { runtime: 'static' });
    const before = await sync(api, id);
    await h.docker.getContainer(before.sync.containerId).kill();

    const after = await sync(api, id);
    expect(after.sync).toMatchObject({ action: 'recreate', copied: 2 });
    expect(after.sync.containerId).not.toBe(before.sync.containerId);
    expect(after.sandbox.inSync).toBe(true);
    expect(await preview(after.sandbox.previewUrl)).toMatchObject({ status: 200, body: 'alive' });
    expect(await preview(`${after.sandbox.previewUrl}/css/site.css`)).toMatchObject({ status: 200, body: 'body{}' });
  });

  it('restarts a node app on a code change and reinstalls when package.json changes, in the same container', async () => {
    const { api, id } = await newSession();
    const server = (body: string) => `require('http').createServer((q, s) => s.end(${body})).listen(process.env.PORT);`;
    await save(api, id, {
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0', scripts: { start: 'node server.js' } }),
      'server.js': server("'one'"),
      'vendor/greet/package.json': JSON.stringify({ name: 'greet', version: '1.0.0', main: 'index.js' }),
      'vendor/greet/index.js': "module.exports = () => 'hello from greet';",
    });
    await api.call('PUT', `/platform/builder/sessions/${id}/sandbox`, { runtime: 'node' });
    const one = await sync(api, id);
    expect(one.sync).toMatchObject({ action: 'recreate' });
    expect(await preview(one.sandbox.previewUrl)).toMatchObject({ status: 200, body: 'one' });
    // The supervisor, npm and the app all run as the base's unprivileged user, never as root.
    const uids = await processUids(h.docker, one.sync.containerId);
    expect(uids.length).toBeGreaterThanOrEqual(2);
    expect(new Set(uids)).toEqual(new Set([APP_UID]));

    await save(api, id, { 'server.js': server("'two'") });
    const two = await sync(api, id);
    expect(two.sync).toMatchObject({ action: 'restart', copied: 1, containerId: one.sync.containerId });
    expect(await preview(two.sandbox.previewUrl)).toMatchObject({ status: 200, body: 'two' });

    // The new dependency exists only once npm install has linked it into node_modules.
    await save(api, id, {
      'package.json': JSON.stringify({
        name: 'app',
        version: '1.0.0',
        scripts: { start: 'node server.js' },
        dependencies: { greet: 'file:./vendor/greet' },
      }),
      'server.js': server("require('greet')()"),
    });
    const three = await sync(api, id);
    expect(three.sync).toMatchObject({ action: 'reinstall', copied: 2, containerId: one.sync.containerId });
    expect(three.sandbox.inSync).toBe(true);
    expect(await preview(three.sandbox.previewUrl)).toMatchObject({ status: 200, body: 'hello from greet' });
  });

  it('follows a model turn: the checkpoint it made is synced and the turn stores sandbox.synced before it ends', async () => {
    const double: ProviderDouble = await startOpenAiDouble({ models: ['gpt-4o-mini'] });
    try {
      const { api, id } = await newSession();
      const providerId = (
        await api.post<Data<{ id: string }>>('/platform/ai-providers', {
          name: 'double',
          kind: 'openai_compatible',
          baseUrl: double.baseUrl,
          apiKey: double.apiKey,
          defaultModel: 'gpt-4o-mini',
        })
      ).body.data.id;
      await api.call('PUT', `/platform/builder/sessions/${id}/provider`, { providerId });
      await api.call('PUT', `/platform/builder/sessions/${id}/sandbox`, { runtime: 'static' });
      double.reply(
        {
          stream: openai.toolCalls([
            { id: 'call_1', name: 'write_file', args: ['{"path":"index.html","content":"<p>by the model</p>"}'] },
          ]),
        },
        { stream: openai.text(['Done.']) },
      );
      const turn = await api.post<Data<{ turnId: string; checkpoint: { id: string } }>>(
        `/platform/builder/sessions/${id}/messages`,
        { content: 'Write the page' },
      );
      expect(turn.status).toBe(200);
      // The turn's stored events, which its SSE stream replays in this order.
      const stored = await h.db
        .collection('builder_turn_events')
        .find({ turnId: turn.body.data.turnId })
        .sort({ seq: 1 })
        .toArray();
      const types = stored.map((e) => e.type as string);
      expect(types.indexOf('sandbox.synced')).toBeGreaterThan(types.indexOf('checkpoint.created'));
      expect(types.indexOf('sandbox.synced')).toBeLessThan(types.indexOf('turn.completed'));
      const synced = stored.find((e) => e.type === 'sandbox.synced')!.data as { previewUrl: string };
      expect(synced).toMatchObject({ inSync: true, checkpointId: turn.body.data.checkpoint.id });
      expect(await preview(synced.previewUrl)).toMatchObject({ status: 200, body: '<p>by the model</p>' });
    } finally {
      await double.close();
    }
  });

  it("answers another organisation's session sandbox with 404", async () => {
    const { api, id } = await newSession();
    await save(api, id, { 'index.html': 'mine' });
    const other = (await newSession()).api;
    const put = await other.call<Data<unknown>>('PUT', `/platform/builder/sessions/${id}/sandbox`, {
      runtime: 'static',
    });
    const post = await other.post<Data<unknown>>(`/platform/builder/sessions/${id}/sandbox/sync`, {});
    const follow = await other.get<Data<unknown>>(`/platform/builder/sessions/${id}/sandbox/syncs/${randomUUID()}`);
    expect([put.status, post.status, follow.status]).toEqual([404, 404, 404]);
    expect(await createSandboxStore(h.db).get((await h.newOrg()).orgId, id)).toBeUndefined();
    // Nor did the other org's attempt configure anything for the session's own org.
    const own = await api.post<Data<unknown>>(`/platform/builder/sessions/${id}/sandbox/sync`, {});
    expect(own.status).toBe(400);
  });

  it('answers a sync that outlasts the wait with 202 and a url that follows it to its end', async () => {
    const { api, id } = await newSession();
    await save(api, id, { 'server.js': '// never listens' });
    // An app that never answers: the sync cannot end before SANDBOX_READY_TIMEOUT_S (60 s), far past the wait (5 s).
    await api.call('PUT', `/platform/builder/sessions/${id}/sandbox`, { runtime: 'node', startCommand: 'sleep 600' });
    const started = await api.post<Data<Progress>>(`/platform/builder/sessions/${id}/sandbox/sync`, {});
    expect(started.status).toBe(202);
    const syncId = started.body.data.id;
    expect(started.body.data).toMatchObject({
      state: 'running',
      url: `/platform/builder/sessions/${id}/sandbox/syncs/${syncId}`,
      sync: null,
      sandbox: { inSync: false },
    });
    // Followed: running while the app is given its time, then ended with why it failed.
    let progress = started.body.data;
    while (progress.state === 'running') {
      const next = await api.get<Data<Progress>>(progress.url);
      expect([next.status, next.body.data.id]).toEqual([200, syncId]);
      progress = next.body.data;
    }
    expect(progress.sync).toMatchObject({ status: 'failed', error: expect.stringMatching(/did not answer HTTP/) });
    expect(progress.sandbox).toMatchObject({ status: 'failed', inSync: false });
    // The same sync reads the same once ended; a sync it never made is 404 with what to do.
    const again = await api.get<Data<Progress>>(progress.url);
    expect(again.body.data).toMatchObject({ id: syncId, state: 'ended', sync: { status: 'failed' } });
    const unknown = await api.get<Data<unknown>>(`/platform/builder/sessions/${id}/sandbox/syncs/${randomUUID()}`);
    expect([unknown.status, unknown.body.message]).toEqual([404, expect.stringContaining('POST')]);
  }, 240_000);

  it('stops an idle sandbox and brings it back on the next sync', async () => {
    const idle = await startHarness('builder-sandbox-idle', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      SANDBOX_IDLE_S: '2',
    });
    try {
      const o = await idle.newOrg();
      const projectId = randomUUID();
      const now = new Date();
      await createProjectStore(idle.db).insert({
        _id: projectId,
        orgId: o.orgId,
        name: 'idle',
        createdAt: now,
        updatedAt: now,
        createdBy: o.userId,
      });
      const api = client(idle, o.token);
      const id = (await api.post<Data<{ id: string }>>('/platform/builder/sessions', { projectId })).body.data.id;
      sessions.push(id);
      await api.call('PUT', `/platform/builder/sessions/${id}/files`, {
        files: [{ path: 'index.html', content: 'back' }],
      });
      await api.call('PUT', `/platform/builder/sessions/${id}/sandbox`, { runtime: 'static' });
      const first = await syncToEnd(api, id);
      expect(first.sandbox.inSync).toBe(true);
      const store = createSandboxStore(idle.db);
      await eventually(
        async () => ((await store.get(o.orgId, id))?.status === 'stopped' ? true : undefined),
        'the idle stop',
      );
      expect((await idle.docker.getContainer(first.sync.containerId).inspect()).State.Running).toBe(false);

      const back = await syncToEnd(api, id);
      expect(back.sync).toMatchObject({ status: 'running', action: 'recreate' });
      expect(back.sandbox.inSync).toBe(true);
      expect(await preview(back.sandbox.previewUrl)).toMatchObject({ status: 200, body: 'back' });
    } finally {
      await idle.stop();
    }
  });
});
