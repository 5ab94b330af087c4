import { randomUUID } from 'node:crypto';

import { createProjectStore } from '@shared/projects/store';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Body = Record<string, unknown>;
type Data<T = Body> = { data: T; message?: string };
interface SessionBody {
  id: string;
  head: { id: string; seq: number; files: { path: string; sha256: string; size: number }[] } | null;
  checkpoints: { id: string; seq: number; reason: string; parent: string | null; source: string | null }[];
  messages: { id: string; reverted: boolean }[];
  isDefault: boolean;
  remixedFrom: Body | null;
  sandbox: unknown;
}

/** Sessions, files, checkpoints, revert, shares and remix over HTTP, on the real stack (no model turns here). */
describe('builder sessions', () => {
  let h: Harness;
  let projects: ReturnType<typeof createProjectStore>;

  beforeAll(async () => {
    h = await startHarness('builder-sessions', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' }, { worker: false });
    projects = createProjectStore(h.db);
  });
  afterAll(() => h?.stop());

  /** An org with an owner, a project, and a member of it with `role` (its own token). */
  async function org() {
    const o = await h.newOrgWithProject();
    const { projectId } = o;
    const member = async (role: 'admin' | 'developer' | 'viewer', orgRole: 'developer' | 'viewer' = 'developer') => {
      const user = await h.identity.addUser({ orgId: o.orgId, email: `${randomUUID()}@x.invalid`, role: orgRole });
      await projects.addMember({
        projectId,
        orgId: o.orgId,
        userId: user._id,
        role,
        addedAt: new Date(),
        addedBy: o.userId,
      });
      const t = await h.identity.createToken({ orgId: o.orgId, userId: user._id, name: 't', scopes: [] });
      return client(h, t.token);
    };
    return { ...o, projectId, api: client(h, o.token), member };
  }

  const session = async (api: ReturnType<typeof client>, id: string) =>
    (await api.get<Data<SessionBody>>(`/platform/builder/sessions/${id}`)).body.data;

  it('saves files as checkpoints, refuses a stale expectedHead with 409, and validates paths and sizes', async () => {
    const { api, projectId } = await org();
    const created = await api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId, title: 'Shop' });
    expect(created.status).toBe(200);
    const id = created.body.data.id;
    expect(created.body.data).toMatchObject({
      head: null,
      checkpoints: [],
      messages: [],
      isDefault: false,
      sandbox: null,
    });

    const save = (body: unknown) =>
      api.call<Data<{ checkpoint: { id: string; seq: number }; created: boolean }>>(
        'PUT',
        `/platform/builder/sessions/${id}/files`,
        body,
      );
    const first = await save({
      files: [
        { path: 'index.html', content: '<h1>hi</h1>' },
        { path: 'src/app.js', content: 'x' },
      ],
      expectedHead: null,
    });
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ created: true, checkpoint: { seq: 1 } });
    const second = await save({
      files: [{ path: 'src/app.js', delete: true }],
      expectedHead: first.body.data.checkpoint.id,
    });
    expect(second.body.data.checkpoint.seq).toBe(2);

    const stale = await save({ files: [{ path: 'a.txt', content: 'a' }], expectedHead: first.body.data.checkpoint.id });
    expect(stale.status).toBe(409);
    expect(stale.body).toEqual({ status: 'error', message: expect.stringContaining(second.body.data.checkpoint.id) });

    const s = await session(api, id);
    expect(s.head!.files.map((f) => f.path)).toEqual(['index.html']);
    expect(s.checkpoints.map((c) => c.seq)).toEqual([2, 1]);

    for (const path of ['../x', '/etc/passwd', 'a\\b', 'a\u0001b', '.git/config'])
      expect((await save({ files: [{ path, content: 'x' }] })).status).toBe(400);
    // .git in any letter case at any depth, and names that hide characters, each refused saying why.
    for (const [path, why] of [
      ['sub/.git/hooks/pre-commit', /\.git segment/],
      ['.GIT/config', /\.git segment/],
      ['invoice\u202Etxt.exe', /invisible character \(U\+202E\)/],
      ['a\u200Bb.js', /invisible character \(U\+200B\)/],
    ] as const) {
      const r = await save({ files: [{ path, content: 'x' }] });
      expect([path, r.status, r.body.message]).toEqual([path, 400, expect.stringMatching(why)]);
    }
    expect((await session(api, id)).head!.files.map((f) => f.path)).toEqual(['index.html']);
    const big = await save({
      files: [{ path: 'big.bin', content: Buffer.alloc(600 * 1024).toString('base64'), encoding: 'base64' }],
    });
    expect([400, 413]).toContain(big.status);
    const justUnder = await save({
      files: [{ path: 'big.bin', content: Buffer.alloc(512 * 1024, 1).toString('base64'), encoding: 'base64' }],
    });
    expect(justUnder.status).toBe(200);
    const tooBig = await save({
      files: [{ path: 'big2.bin', content: Buffer.alloc(512 * 1024 + 1).toString('base64'), encoding: 'base64' }],
    });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.message).toMatch(/at most 524288 bytes/);
  });

  it('keeps both of two concurrent saves without expectedHead, and lets one of two with the same expectedHead win', async () => {
    const { api, projectId } = await org();
    const id = (await api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId })).body.data.id;
    const put = (path: string, expectedHead?: string | null) =>
      api.call<Data<{ checkpoint: { id: string } }>>('PUT', `/platform/builder/sessions/${id}/files`, {
        files: [{ path, content: path }],
        ...(expectedHead !== undefined ? { expectedHead } : {}),
      });
    const all = await Promise.all(['a', 'b', 'c', 'd'].map((p) => put(`${p}.txt`)));
    expect(all.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await session(api, id)).head!.files.map((f) => f.path)).toEqual(['a.txt', 'b.txt', 'c.txt', 'd.txt']);

    const head = (await session(api, id)).head!.id;
    const raced = await Promise.all(['e', 'f', 'g'].map((p) => put(`${p}.txt`, head)));
    expect(raced.map((r) => r.status).sort()).toEqual([200, 409, 409]);
  });

  it('reverts to a checkpoint as a new one, keeps every checkpoint, and refuses a stale expectedHead', async () => {
    const { api, projectId } = await org();
    const id = (await api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId })).body.data.id;
    const put = async (content: string) =>
      (
        await api.call<Data<{ checkpoint: { id: string } }>>('PUT', `/platform/builder/sessions/${id}/files`, {
          files: [{ path: 'index.html', content }],
        })
      ).body.data.checkpoint.id;
    const v1 = await put('v1');
    const v2 = await put('v2');
    const reverted = await api.post<Data<{ id: string; seq: number; reason: string; source: string; parent: string }>>(
      `/platform/builder/sessions/${id}/revert`,
      { checkpointId: v1, expectedHead: v2 },
    );
    expect(reverted.status).toBe(200);
    expect(reverted.body.data).toMatchObject({ seq: 3, reason: 'revert', source: v1, parent: v2 });
    const s = await session(api, id);
    expect(s.head!.files).toEqual((await session(api, id)).head!.files);
    expect(s.checkpoints.map((c) => c.id)).toEqual([reverted.body.data.id, v2, v1]);

    const stale = await api.post(`/platform/builder/sessions/${id}/revert`, { checkpointId: v2, expectedHead: v2 });
    expect(stale.status).toBe(409);
    expect((await api.post(`/platform/builder/sessions/${id}/revert`, { checkpointId: randomUUID() })).status).toBe(
      404,
    );
  });

  it('gives one default session per project however many ask at once, and lets a viewer read but not change it', async () => {
    const o = await org();
    const results = await Promise.all(
      Array.from({ length: 6 }, () =>
        o.api.post<Data<SessionBody>>(`/platform/builder/projects/${o.projectId}/session`, {}),
      ),
    );
    expect(new Set(results.map((r) => r.body.data.id)).size).toBe(1);
    expect(results[0]!.body.data.isDefault).toBe(true);
    const id = results[0]!.body.data.id;

    const viewer = await o.member('viewer');
    expect(
      (await viewer.post<Data<SessionBody>>(`/platform/builder/projects/${o.projectId}/session`, {})).body.data.id,
    ).toBe(id);
    expect((await viewer.get(`/platform/builder/sessions/${id}`)).status).toBe(200);
    expect(
      (await viewer.call('PUT', `/platform/builder/sessions/${id}/files`, { files: [{ path: 'a', content: 'a' }] }))
        .status,
    ).toBe(403);
    const developer = await o.member('developer');
    expect(
      (await developer.call('PUT', `/platform/builder/sessions/${id}/files`, { files: [{ path: 'a', content: 'a' }] }))
        .status,
    ).toBe(200);
    // An org developer who is not in the project does not see it at all.
    const outsider = client(
      h,
      (
        await h.identity.createToken({
          orgId: o.orgId,
          userId: (await h.identity.addUser({ orgId: o.orgId, email: `${randomUUID()}@x.invalid`, role: 'developer' }))
            ._id,
          name: 't',
          scopes: [],
        })
      ).token,
    );
    expect((await outsider.get(`/platform/builder/sessions/${id}`)).status).toBe(404);
  });

  it('shares a pinned checkpoint; a remix is a new session whose edits leave the original alone; revoke is 404 after', async () => {
    const o = await org();
    const id = (await o.api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId: o.projectId })).body.data
      .id;
    await o.api.call('PUT', `/platform/builder/sessions/${id}/files`, {
      files: [{ path: 'index.html', content: 'original' }],
    });
    const pinned = (await session(o.api, id)).head!;
    const share = await o.api.post<Data<{ slug: string; checkpointId: string }>>(
      `/platform/builder/sessions/${id}/share`,
      { access: 'remix', expiresIn: 3600 },
    );
    expect(share.status).toBe(200);
    const slug = share.body.data.slug;
    expect(share.body.data.checkpointId).toBe(pinned.id);
    // A later save does not move the share.
    await o.api.call('PUT', `/platform/builder/sessions/${id}/files`, {
      files: [{ path: 'later.txt', content: 'later' }],
    });
    expect((await o.api.get<Data<{ files: unknown[] }>>(`/platform/builder/shares/${slug}`)).body.data.files).toEqual(
      pinned.files,
    );

    const remix = await o.api.post<Data<SessionBody>>(`/platform/builder/shares/${slug}/remix`, {
      projectId: o.projectId,
    });
    expect(remix.status).toBe(200);
    const copy = remix.body.data;
    expect(copy.id).not.toBe(id);
    expect(copy.head!.files).toEqual(pinned.files);
    expect(copy.remixedFrom).toEqual({ sessionId: id, checkpointId: pinned.id, slug });
    await o.api.call('PUT', `/platform/builder/sessions/${copy.id}/files`, {
      files: [{ path: 'index.html', content: 'remixed' }],
    });
    const original = await session(o.api, id);
    expect(original.head!.files.find((f) => f.path === 'index.html')).toEqual(
      pinned.files.find((f) => f.path === 'index.html'),
    );
    expect(original.checkpoints).toHaveLength(2);

    const viewOnly = (
      await o.api.post<Data<{ slug: string }>>(`/platform/builder/sessions/${id}/share`, { access: 'view' })
    ).body.data.slug;
    expect((await o.api.post(`/platform/builder/shares/${viewOnly}/remix`, { projectId: o.projectId })).status).toBe(
      403,
    );

    expect((await o.api.del(`/platform/builder/shares/${slug}`)).status).toBe(204);
    expect((await o.api.get(`/platform/builder/shares/${slug}`)).status).toBe(404);
    expect((await o.api.post(`/platform/builder/shares/${slug}/remix`, { projectId: o.projectId })).status).toBe(404);
    expect((await o.api.del(`/platform/builder/shares/${slug}`)).status).toBe(404);
  });

  it("lists a project's sessions newest first, to its readers only", async () => {
    const o = await org();
    const first = (
      await o.api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId: o.projectId, title: 'One' })
    ).body.data.id;
    const second = (
      await o.api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId: o.projectId, title: 'Two' })
    ).body.data.id;
    const other = await h.newOrgWithProject();
    await client(h, other.token).post('/platform/builder/sessions', { projectId: other.projectId, title: 'Elsewhere' });

    const viewer = await o.member('viewer', 'viewer');
    for (const api of [o.api, viewer]) {
      const r = await api.get<Data<{ id: string; title: string; isDefault: boolean }[]>>(
        `/platform/builder/projects/${o.projectId}/sessions`,
      );
      expect([r.status, r.body.message]).toEqual([200, undefined]);
      expect(r.body.data.map((s) => [s.id, s.title, s.isDefault])).toEqual([
        [second, 'Two', false],
        [first, 'One', false],
      ]);
    }
    const limited = await o.api.get<Data<unknown[]>>(`/platform/builder/projects/${o.projectId}/sessions?limit=1`);
    expect(limited.body.data).toHaveLength(1);
    // Someone of the org who is not in the project sees no such project.
    const outsider = await h.identity.addUser({
      orgId: o.orgId,
      email: `${randomUUID()}@x.invalid`,
      role: 'developer',
    });
    const t = await h.identity.createToken({ orgId: o.orgId, userId: outsider._id, name: 't', scopes: [] });
    expect((await client(h, t.token).get(`/platform/builder/projects/${o.projectId}/sessions`)).status).toBe(404);
  });

  it('reads a file of the head or of a checkpoint: text as it is, other bytes as base64, a missing path 404', async () => {
    const { api, projectId, member } = await org();
    const id = (await api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId })).body.data.id;
    const save = async (files: unknown[]) =>
      (
        await api.call<Data<{ checkpoint: { id: string } }>>('PUT', `/platform/builder/sessions/${id}/files`, {
          files,
        })
      ).body.data.checkpoint.id;
    const v1 = await save([{ path: 'src/app.js', content: 'let a = "é";' }]);
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe, 0x00]);
    const v2 = await save([
      { path: 'src/app.js', content: 'let a = 2;' },
      { path: 'logo.png', content: png.toString('base64'), encoding: 'base64' },
    ]);
    type File = { path: string; content: string; encoding: string; checkpointId: string; size: number };
    const read = (query: string, who = api) => who.get<Data<File>>(`/platform/builder/sessions/${id}/files?${query}`);

    const head = await read('path=src/app.js', await member('viewer'));
    expect([head.status, head.body.data]).toEqual([
      200,
      expect.objectContaining({ path: 'src/app.js', content: 'let a = 2;', encoding: 'utf8', checkpointId: v2 }),
    ]);
    const old = await read(`path=src%2Fapp.js&checkpointId=${v1}`);
    expect(old.body.data).toMatchObject({ content: 'let a = "é";', encoding: 'utf8', checkpointId: v1, size: 13 });
    const bin = await read('path=logo.png');
    expect(bin.body.data).toMatchObject({ encoding: 'base64', content: png.toString('base64'), size: 7 });

    const missing = await read(`path=logo.png&checkpointId=${v1}`);
    expect([missing.status, missing.body.message]).toEqual([404, expect.stringContaining('No file logo.png')]);
    expect((await read(`path=x&checkpointId=${randomUUID()}`)).status).toBe(404);
    const bad = await read('path=..%2Fetc%2Fpasswd');
    expect([bad.status, bad.body.message]).toEqual([400, expect.stringContaining('path')]);
    expect((await read('')).status).toBe(400);
  });

  it("answers 404 for another organisation's session, share and provider, and never shows it", async () => {
    const a = await org();
    const b = await org();
    const id = (await a.api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId: a.projectId })).body.data
      .id;
    await a.api.call('PUT', `/platform/builder/sessions/${id}/files`, {
      files: [{ path: 'index.html', content: 'a' }],
    });
    const slug = (
      await a.api.post<Data<{ slug: string }>>(`/platform/builder/sessions/${id}/share`, { access: 'remix' })
    ).body.data.slug;
    const provider = await a.api.post<Data<{ id: string }>>('/platform/ai-providers', {
      name: 'p',
      kind: 'openai_compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-abc',
      defaultModel: 'm',
    });
    expect(provider.status).toBe(400); // a loopback provider is refused unless the installation allows private ones

    for (const [method, path, body] of [
      ['GET', `/platform/builder/sessions/${id}`, undefined],
      ['PUT', `/platform/builder/sessions/${id}/files`, { files: [{ path: 'x', content: 'x' }] }],
      ['POST', `/platform/builder/sessions/${id}/revert`, { checkpointId: randomUUID() }],
      ['POST', `/platform/builder/sessions/${id}/share`, { access: 'view' }],
      ['GET', `/platform/builder/shares/${slug}`, undefined],
      ['POST', `/platform/builder/shares/${slug}/remix`, { projectId: b.projectId }],
      ['DELETE', `/platform/builder/shares/${slug}`, undefined],
      ['POST', `/platform/builder/projects/${a.projectId}/session`, {}],
      ['POST', '/platform/builder/sessions', { projectId: a.projectId }],
      ['GET', `/platform/builder/projects/${a.projectId}/sessions`, undefined],
      ['GET', `/platform/builder/sessions/${id}/files?path=index.html`, undefined],
    ] as const) {
      const r = await b.api.call(method, path, body);
      expect([method, path, r.status]).toEqual([method, path, 404]);
    }
    expect((await a.api.get(`/platform/builder/shares/${slug}`)).status).toBe(200);
  });
});

/** A message's request waits for its turn BUILDER_MESSAGE_WAIT_S at most: here no worker takes the turn. */
describe('builder messages whose turn has not ended', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      'builder-message-wait',
      { RATE_LIMIT_PLATFORM_PER_15MIN: '100000', ALLOW_PRIVATE_AI_PROVIDERS: 'true', BUILDER_MESSAGE_WAIT_S: '1' },
      { worker: false },
    );
  });
  afterAll(() => h?.stop());

  it('answers 202 with the turn running and where to follow it, instead of holding the request open', async () => {
    const o = await h.newOrgWithProject();
    const api = client(h, o.token);
    const provider = await api.post<Data<{ id: string }>>('/platform/ai-providers', {
      name: 'p',
      kind: 'openai_compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
      apiKey: 'sk-abc',
      defaultModel: 'm',
    });
    expect(provider.status).toBe(200);
    const id = (
      await api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId: o.projectId, title: 'Waits' })
    ).body.data.id;
    const sent = await api.post<Data<{ turnId: string; status: string; eventsUrl: string }>>(
      `/platform/builder/sessions/${id}/messages`,
      { content: 'hello' },
    );
    expect(sent.status).toBe(202);
    expect(sent.body.data).toEqual({
      turnId: expect.any(String),
      status: 'running',
      eventsUrl: `/platform/builder/sessions/${id}/turns/${sent.body.data.turnId}/events`,
    });
  });
});
