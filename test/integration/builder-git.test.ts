import { randomUUID } from 'node:crypto';

import { createBlobStore } from '@shared/builder/files';
import { createBuilderStore } from '@shared/builder/store';

import { client } from '../helpers/client';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { type Harness, startHarness } from '../helpers/harness';

type Data<T> = { data: T; message?: string };
type Files = { path: string; sha256: string; size: number }[];
interface SessionBody {
  id: string;
  head: { id: string; reason: string; files: Files } | null;
}

/** Git push and import of builder sessions against a smart-HTTP Git server on loopback (git http-backend). */
describe('builder git', () => {
  let h: Harness;
  let git: GitServer;

  beforeAll(async () => {
    h = await startHarness('builder-git', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000', ALLOW_PRIVATE_GIT_HOSTS: 'true' });
    git = await startGitServer();
  });
  afterAll(async () => {
    await git?.stop();
    await h?.stop();
  });

  async function org() {
    const o = await h.newOrgWithProject();
    const { projectId } = o;
    return { api: client(h, o.token), projectId, orgId: o.orgId, userId: o.userId };
  }

  const sorted = (files: Files) => files.map((f) => `${f.path} ${f.sha256}`).sort();

  it('pushes a session to a private repository and imports it back with the same files; a moved branch needs force', async () => {
    const token = `git-${randomUUID()}`;
    const repo = await git.addRepo(
      `acme/app-${randomUUID().slice(0, 8)}`,
      { 'README.md': 'seed' },
      { private: { token } },
    );
    const { api, projectId } = await org();
    const secret = await api.post<Data<{ id: string }>>('/platform/secrets', {
      name: 'GIT_TOKEN',
      value: token,
      allowedHosts: ['127.0.0.1'],
    });
    expect(secret.status).toBe(200);
    const tokenSecretId = secret.body.data.id;

    const a = (await api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId })).body.data.id;
    const saved = await api.call<Data<unknown>>('PUT', `/platform/builder/sessions/${a}/files`, {
      files: [
        { path: 'index.html', content: '<h1>from the builder</h1>' },
        { path: 'src/app.js', content: 'console.log("héllo")' },
      ],
    });
    expect(saved.status).toBe(200);
    const push = (id: string, body: Record<string, unknown>) =>
      api.post<Data<{ commit: string; pushed: boolean }>>(`/platform/builder/sessions/${id}/git/push`, {
        branch: 'main',
        message: 'From Slipway',
        tokenSecretId,
        ...body,
      });

    // The branch has a commit this session did not make: refused, and nothing is pushed.
    const refused = await push(a, { remoteUrl: repo });
    expect([refused.status, refused.body.message]).toEqual([409, expect.stringContaining('force')]);
    const forced = await push(a, { remoteUrl: repo, force: true });
    expect([forced.status, forced.body.data?.pushed]).toEqual([200, true]);
    const status = await api.get<Data<{ remoteUrl: string; lastCommit: string; headDiffers: boolean }>>(
      `/platform/builder/sessions/${a}/git`,
    );
    expect(status.body.data).toMatchObject({
      remoteUrl: repo,
      lastCommit: forced.body.data.commit,
      headDiffers: false,
    });

    const imported = await api.post<Data<SessionBody>>('/platform/builder/import/git', {
      repoUrl: repo,
      branch: 'main',
      projectId,
      tokenSecretId,
    });
    expect([imported.status, imported.body.message]).toEqual([200, undefined]);
    const b = imported.body.data;
    expect(b.head?.reason).toBe('import');
    const aHead = (await api.get<Data<SessionBody>>(`/platform/builder/sessions/${a}`)).body.data.head!;
    // The pushed commit holds exactly the session's files (the seed README is not in the session, so not in the commit).
    expect(sorted(b.head!.files)).toEqual(sorted(aHead.files));

    // The imported session pushes on top (it knows the commit it came from); then A's branch has moved on.
    await api.call('PUT', `/platform/builder/sessions/${b.id}/files`, {
      files: [{ path: 'index.html', content: 'from b' }],
    });
    const fromB = await push(b.id, {});
    expect([fromB.status, fromB.body.message]).toEqual([200, undefined]);
    await api.call('PUT', `/platform/builder/sessions/${a}/files`, {
      files: [{ path: 'index.html', content: 'from a' }],
    });
    expect((await push(a, {})).status).toBe(409);
    const again = await api.post<Data<SessionBody>>('/platform/builder/import/git', {
      repoUrl: repo,
      branch: 'main',
      projectId,
      tokenSecretId,
    });
    expect(again.body.data.head!.files.find((f) => f.path === 'index.html')!.size).toBe('from b'.length);
    expect((await push(a, { force: true })).status).toBe(200);
  });

  it('refuses a secret the org does not have, and another organisation’s session or project, with nothing cloned', async () => {
    const { api, projectId } = await org();
    const a = (await api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId })).body.data.id;
    await api.call('PUT', `/platform/builder/sessions/${a}/files`, { files: [{ path: 'a.txt', content: 'a' }] });
    const other = await org();
    const foreign = await other.api.post<Data<unknown>>(`/platform/builder/sessions/${a}/git/push`, {
      remoteUrl: `${git.url}/x.git`,
      branch: 'main',
      message: 'steal',
    });
    expect(foreign.status).toBe(404);
    expect((await other.api.get(`/platform/builder/sessions/${a}/git`)).status).toBe(404);
    const intoForeign = await other.api.post('/platform/builder/import/git', {
      repoUrl: `${git.url}/x.git`,
      projectId,
    });
    expect(intoForeign.status).toBe(404);
    const badSecret = await api.post<Data<unknown>>('/platform/builder/import/git', {
      repoUrl: `${git.url}/x.git`,
      projectId,
      tokenSecretId: randomUUID(),
    });
    expect(badSecret.status).toBe(400);
  });

  it('refuses to push a file saved under older path rules (a nested .git), before git runs', async () => {
    const { api, projectId, orgId, userId } = await org();
    const id = (await api.post<Data<SessionBody>>('/platform/builder/sessions', { projectId })).body.data.id;
    await api.call('PUT', `/platform/builder/sessions/${id}/files`, { files: [{ path: 'index.html', content: 'a' }] });
    // Written past the api, as a session saved before the rule would hold it.
    const store = createBuilderStore(h.db);
    const hook = await createBlobStore({ s3: h.s3, bucket: h.config.S3_BUCKET }).put(
      orgId,
      Buffer.from('#!/bin/sh\necho owned\n'),
    );
    const head = await store.head(id);
    await store.appendCheckpoint(head, {
      sessionId: id,
      orgId,
      files: [...head!.files, { path: 'sub/.GIT/hooks/pre-commit', ...hook }],
      createdBy: userId,
      reason: 'save',
    });
    const repo = await git.addRepo(`acme/nested-${randomUUID().slice(0, 8)}`, { 'README.md': 'seed' });
    const before = git.requests.length;
    const r = await api.post<Data<unknown>>(`/platform/builder/sessions/${id}/git/push`, {
      remoteUrl: repo,
      branch: 'main',
      message: 'nested',
      force: true,
    });
    expect([r.status, r.body.message]).toEqual([
      400,
      expect.stringMatching(/sub\/\.GIT\/hooks\/pre-commit.*\.git segment/),
    ]);
    expect(git.requests.length).toBe(before);
  });
});
