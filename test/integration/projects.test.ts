import { randomUUID } from 'node:crypto';

import { LABELS } from '@shared/constants';
import { PERMISSIONS } from '@shared/permissions';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

type Api = ReturnType<typeof client>;
interface Project {
  id: string;
  name: string;
  description?: string;
  framework?: string;
  repoUrl?: string;
  gitBranch?: string;
  gitTokenSecretId?: string;
  vaultEnvironment?: string;
  createdBy: string;
  createdAt: string;
  updatedAt: string;
  deploymentCount?: number;
}
type Answer<T = unknown> = { status: 'success'; data: T } & { status: string; message?: string };
type Compat = { deploymentId?: string; code?: string; error?: string };

// A public address literal: the repoUrl check needs no DNS (none is reachable here) and treats it as public.
const PUBLIC_REPO = 'https://93.184.216.34/acme/app.git';

describe('platform API: projects', () => {
  let h: Harness;
  let image: string;

  beforeAll(async () => {
    h = await startHarness('projects', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
    });
    image = await buildFixtureImage(h.docker, 'hello');
  }, 120_000);
  afterAll(() => h?.stop());

  const create = (api: Api, body: Record<string, unknown>) => api.post<Answer<Project>>('/platform/projects', body);
  const put = (api: Api, id: string, body: unknown) =>
    api.call<Answer<Project>>('PUT', `/platform/projects/${id}`, body);
  const uniq = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

  /** A user of the org with `role` and a token holding every scope its role could use. */
  async function member(orgId: string, role: 'admin' | 'developer' | 'viewer') {
    const user = await h.identity.addUser({ orgId, email: `${uniq(role)}@example.test`, role });
    const t = await h.identity.createToken({ orgId, userId: user._id, name: role, scopes: [...PERMISSIONS] });
    return { userId: user._id, api: client(h, t.token) };
  }

  it('creates, reads, lists, updates in part and deletes a project; the creator is its admin', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const c = await create(api, {
      name: 'Shop front',
      description: 'the storefront',
      framework: 'nextjs',
      repoUrl: PUBLIC_REPO,
      gitBranch: 'main',
      vaultEnvironment: 'STAGING',
    });
    expect(c.status).toBe(200);
    expect(c.body.status).toBe('success');
    const p = c.body.data;
    expect(p).toMatchObject({
      name: 'Shop front',
      description: 'the storefront',
      framework: 'nextjs',
      repoUrl: PUBLIC_REPO,
      gitBranch: 'main',
      vaultEnvironment: 'STAGING',
      createdBy: owner.userId,
      deploymentCount: 0,
    });
    expect(p.id).toMatch(/^[0-9a-f-]{36}$/);

    const members = await api.get<Answer<{ userId: string; role: string }[]>>(`/platform/projects/${p.id}/members`);
    expect(members.body.data).toEqual([expect.objectContaining({ userId: owner.userId, role: 'admin' })]);

    const got = await api.get<Answer<Project>>(`/platform/projects/${p.id}`);
    expect([got.status, got.body.data]).toEqual([200, { ...p, deploymentCount: 0 }]);
    const list = await api.get<Answer<{ projects: Project[]; total: number }>>('/platform/projects');
    expect(list.body.data.total).toBe(1);
    expect(list.body.data.projects.map((x) => x.id)).toEqual([p.id]);

    // Only the fields given change; null removes an optional one.
    const u = await put(api, p.id, { description: 'new words', framework: null });
    expect(u.status).toBe(200);
    expect(u.body.data).toMatchObject({ name: 'Shop front', description: 'new words', repoUrl: PUBLIC_REPO });
    expect(u.body.data).not.toHaveProperty('framework');
    expect(Date.parse(u.body.data.updatedAt)).toBeGreaterThanOrEqual(Date.parse(p.updatedAt));
    expect((await put(api, p.id, {})).body.data).toMatchObject({ description: 'new words' });
    expect((await put(api, p.id, { name: 'Shop' })).body.data.name).toBe('Shop');

    expect((await api.del(`/platform/projects/${p.id}`)).status).toBe(204);
    const gone = await api.get<Answer>(`/platform/projects/${p.id}`);
    expect([gone.status, gone.body.status]).toEqual([404, 'error']);
    expect(gone.body.message).toMatch(/No project/);
    expect((await api.del(`/platform/projects/${p.id}`)).status).toBe(404);
    // Its memberships went with it.
    expect(await h.db.collection('project_members').countDocuments({ projectId: p.id })).toBe(0);
  });

  it('validates every field, refuses unknown ones, and holds repoUrl to a deploy’s rules', async () => {
    const api = client(h, (await h.newOrg()).token);
    const refusals: [Record<string, unknown>, RegExp][] = [
      [{}, /name/],
      [{ name: '' }, /name/],
      [{ name: ' padded' }, /leading or trailing spaces/],
      [{ name: 'x'.repeat(101) }, /name/],
      [{ name: 'a\u0007b' }, /control/],
      [{ name: 'ok', owner: 'me' }, /owner|Unrecognized/i],
      [{ name: 'ok', vaultEnvironment: 'QA' }, /vaultEnvironment/],
      [{ name: 'ok', repoUrl: 'ftp://93.184.216.34/x' }, /repoUrl/],
      [{ name: 'ok', repoUrl: 'https://user:pw@93.184.216.34/x.git' }, /must not carry credentials/],
      [{ name: 'ok', repoUrl: 'https://127.0.0.1/x.git' }, /repoUrl is refused/],
      [{ name: 'ok', repoUrl: 'https://10.1.2.3/x.git' }, /repoUrl is refused/],
      [{ name: 'ok', gitBranch: '-rf' }, /gitBranch/],
      [{ name: 'ok', gitTokenSecretId: 'not-a-uuid' }, /gitTokenSecretId/],
      [{ name: 'ok', description: 42 }, /description/],
    ];
    for (const [body, message] of refusals) {
      const r = await create(api, body);
      expect([r.status, r.body.status, body]).toEqual([400, 'error', body]);
      expect(r.body.message).toMatch(message);
    }
    const p = (await create(api, { name: 'valid' })).body.data;
    for (const [body, message] of [
      [{ owner: 'me' }, /owner|Unrecognized/i],
      [{ name: null }, /name/],
      [{ repoUrl: 'https://192.168.0.1/x.git' }, /repoUrl is refused/],
      [{ vaultEnvironment: 'prod' }, /vaultEnvironment/],
    ] as const) {
      const r = await put(api, p.id, body);
      expect([r.status, body]).toEqual([400, body]);
      expect(r.body.message).toMatch(message);
    }
    expect((await put(api, p.id, 'not json')).status).toBe(400);
    expect((await api.get(`/platform/projects/not-a-uuid`)).status).toBe(400);
    // Nothing refused was stored.
    expect((await api.get<Answer<{ total: number }>>('/platform/projects')).body.data.total).toBe(1);
  });

  it('takes a gitTokenSecretId only under a deploy’s rules: secret.use, the org’s secret, its host and environment', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const secret = async (body: Record<string, unknown>) =>
      (
        await api.post<Answer<{ id: string }>>('/platform/secrets', {
          name: uniq('git'),
          value: 'ghp-project-token',
          ...body,
        })
      ).body.data.id;
    const bound = await secret({ allowedHosts: ['93.184.216.34'] });
    const elsewhere = await secret({ allowedHosts: ['github.com'] });
    const staging = await secret({ allowedHosts: ['93.184.216.34'], environment: 'STAGING' });

    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ gitTokenSecretId: bound }, 400, /needs the repoUrl/],
      [{ gitTokenSecretId: randomUUID(), repoUrl: PUBLIC_REPO }, 400, /not a secret of this organisation/],
      [{ gitTokenSecretId: elsewhere, repoUrl: PUBLIC_REPO }, 400, /may be sent only to github\.com/],
      [{ gitTokenSecretId: staging, repoUrl: PUBLIC_REPO }, 400, /STAGING vault environment, not PRODUCTION/],
      [{ gitTokenSecretId: bound, repoUrl: 'http://93.184.216.34/a.git' }, 400, /over https:\/\/ only/],
    ];
    for (const [body, status, message] of cases) {
      const r = await create(api, { name: uniq('git'), ...body });
      expect([r.status, body]).toEqual([status, body]);
      expect(r.body.message).toMatch(message);
    }
    const ok = await create(api, { name: 'private', repoUrl: PUBLIC_REPO, gitTokenSecretId: bound });
    expect(ok.status).toBe(200);
    expect(ok.body.data.gitTokenSecretId).toBe(bound);
    expect(JSON.stringify(ok.body)).not.toContain('ghp-project-token');
    const staged = await create(api, {
      name: 'staged',
      repoUrl: PUBLIC_REPO,
      gitTokenSecretId: staging,
      vaultEnvironment: 'STAGING',
    });
    expect(staged.status).toBe(200);
    // An update is checked on the project as it would be: moving the repository off the secret's host is refused.
    const moved = await put(api, ok.body.data.id, { repoUrl: 'https://93.184.216.35/acme/app.git' });
    expect(moved.status).toBe(400);
    expect(moved.body.message).toMatch(/may be sent only to 93\.184\.216\.34/);
    expect((await put(api, ok.body.data.id, { vaultEnvironment: 'DEVELOPMENT' })).status).toBe(400);

    // Another organisation's secret is not this one's.
    const other = client(h, (await h.newOrg()).token);
    const r = await create(other, { name: 'thief', repoUrl: PUBLIC_REPO, gitTokenSecretId: bound });
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/not a secret of this organisation/);

    // A token without secret.use may create projects but not name a secret in one.
    const t = await api.post<Answer<{ token: string }>>('/platform/tokens', {
      name: 'projects only',
      scopes: ['project.create', 'project.read', 'project.update'],
    });
    const limited = client(h, t.body.data.token);
    const refused = await create(limited, { name: 'no-secret-use', repoUrl: PUBLIC_REPO, gitTokenSecretId: bound });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/secret\.use/);
    expect((await create(limited, { name: 'plain', repoUrl: PUBLIC_REPO })).status).toBe(200);
  });

  it('keeps names unique per organisation: a duplicate, a rename onto one, and concurrent creations are 409', async () => {
    const api = client(h, (await h.newOrg()).token);
    const a = (await create(api, { name: 'alpha' })).body.data;
    const b = (await create(api, { name: 'beta' })).body.data;
    const dup = await create(api, { name: 'alpha', description: 'again' });
    expect([dup.status, dup.body.status]).toEqual([409, 'error']);
    expect(dup.body.message).toMatch(/named "alpha" already exists/);
    expect(dup.body).toEqual({ status: 'error', message: expect.any(String) });
    const rename = await put(api, b.id, { name: 'alpha' });
    expect(rename.status).toBe(409);
    expect((await api.get<Answer<Project>>(`/platform/projects/${b.id}`)).body.data.name).toBe('beta');
    expect((await put(api, a.id, { name: 'alpha' })).status).toBe(200);
    // Another organisation may use the name.
    expect((await create(client(h, (await h.newOrg()).token), { name: 'alpha' })).status).toBe(200);

    const racers = await Promise.all(Array.from({ length: 8 }, () => create(api, { name: 'raced' })));
    expect(racers.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    const all = await api.get<Answer<{ projects: Project[] }>>('/platform/projects?limit=100');
    expect(all.body.data.projects.filter((p) => p.name === 'raced')).toHaveLength(1);
  });

  it('pages the list by name', async () => {
    const api = client(h, (await h.newOrg()).token);
    for (const name of ['c', 'a', 'b']) expect((await create(api, { name })).status).toBe(200);
    const page = await api.get<Answer<{ projects: Project[]; total: number; limit: number; offset: number }>>(
      '/platform/projects?limit=2&offset=1',
    );
    expect(page.body.data).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect(page.body.data.projects.map((p) => p.name)).toEqual(['b', 'c']);
    expect((await api.get('/platform/projects?limit=0')).status).toBe(400);
    expect((await api.get('/platform/projects?colour=red')).status).toBe(400);
  });

  it('answers 404 for another organisation’s project on every route, and lists only its own', async () => {
    const a = client(h, (await h.newOrg()).token);
    const b = client(h, (await h.newOrg()).token);
    const p = (await create(a, { name: 'private' })).body.data;
    for (const r of [
      await b.get<Answer>(`/platform/projects/${p.id}`),
      await put(b, p.id, { description: 'mine now' }),
      await b.del<Answer>(`/platform/projects/${p.id}?force=true`),
      await b.get<Answer>(`/platform/projects/${p.id}/members`),
    ]) {
      expect([r.status, r.body.status]).toEqual([404, 'error']);
    }
    expect((await b.get<Answer<{ total: number }>>('/platform/projects')).body.data.total).toBe(0);
    expect((await a.get<Answer<Project>>(`/platform/projects/${p.id}`)).body.data.description).toBeUndefined();

    // A deploy into another organisation's project is PROJECT_NOT_FOUND, as is an unknown project.
    for (const projectId of [p.id, randomUUID()]) {
      const d = await b.post<Compat>('/compat/deploy', { image, name: 'intruder', port: 8080, projectId });
      expect([d.status, d.body.code]).toEqual([404, 'PROJECT_NOT_FOUND']);
    }
    expect(await h.db.collection('deployments').countDocuments({ projectId: p.id })).toBe(0);
  });

  it('shows a project only to its members below org admin; org admins see every project', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const p = (await create(api, { name: 'team' })).body.data;
    const outsider = await member(owner.orgId, 'developer');
    const admin = await member(owner.orgId, 'admin');
    expect((await outsider.api.get(`/platform/projects/${p.id}`)).status).toBe(404);
    expect((await outsider.api.get<Answer<{ total: number }>>('/platform/projects')).body.data.total).toBe(0);
    expect((await admin.api.get(`/platform/projects/${p.id}`)).status).toBe(200);
    expect((await admin.api.get<Answer<{ total: number }>>('/platform/projects')).body.data.total).toBe(1);

    // A developer creates a project of their own: they administer it, and still cannot see the owner's.
    const mine = await create(outsider.api, { name: 'side project' });
    expect(mine.status).toBe(200);
    const seen = await outsider.api.get<Answer<{ projects: Project[] }>>('/platform/projects');
    expect(seen.body.data.projects.map((x) => x.name)).toEqual(['side project']);
    expect((await put(outsider.api, mine.body.data.id, { description: 'mine' })).status).toBe(200);
  });

  it('deploys into a project, refuses to delete it while it has live deployments, and force destroys them', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const p = (await create(api, { name: 'with-deployments' })).body.data;
    const ids: string[] = [];
    for (const name of ['web', 'worker']) {
      const d = await api.post<Compat>('/compat/deploy', { image, name, port: 8080, projectId: p.id });
      expect(d.status).toBe(202);
      ids.push(d.body.deploymentId!);
    }
    const outside = await api.post<Compat>('/compat/deploy', { image, name: 'outside', port: 8080 });
    expect(outside.status).toBe(202);
    for (const id of [...ids, outside.body.deploymentId!]) await api.waitFor(id, ['running']);
    expect((await api.get<Answer<Project>>(`/platform/projects/${p.id}`)).body.data.deploymentCount).toBe(2);
    expect(await h.db.collection('deployments').countDocuments({ projectId: p.id })).toBe(2);

    const refused = await api.del<Answer>(`/platform/projects/${p.id}`);
    expect([refused.status, refused.body.status]).toEqual([400, 'error']);
    expect(refused.body.message).toMatch(/still has 2 live deployments: /);
    for (const id of ids) expect(refused.body.message).toContain(id);
    expect(refused.body.message).toMatch(/\?force=true/);
    expect((await api.get(`/platform/projects/${p.id}`)).status).toBe(200);

    expect((await api.del(`/platform/projects/${p.id}?force=true`)).status).toBe(204);
    expect((await api.get(`/platform/projects/${p.id}`)).status).toBe(404);
    for (const id of ids) {
      expect((await api.get(`/compat/deployments/${id}`)).status).toBe(404);
      // Through its workflow: the containers go as with DELETE /deployments/{id}.
      await eventually(async () => {
        const left = await h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } });
        return left.length === 0 ? true : undefined;
      }, `the containers of ${id} to be removed`);
    }
    // The deployment outside the project is untouched.
    expect((await api.get<{ status: string }>(`/compat/deployments/${outside.body.deploymentId}`)).body.status).toBe(
      'running',
    );
    await api.destroyAndWait(outside.body.deploymentId!);
  }, 240_000);

  it('force needs deployment.manage in the project as well as project.delete', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const p = (await create(api, { name: 'guarded' })).body.data;
    const d = await api.post<Compat>('/compat/deploy', { image, name: 'kept', port: 8080, projectId: p.id });
    await api.waitFor(d.body.deploymentId!, ['running']);
    const t = await api.post<Answer<{ token: string }>>('/platform/tokens', {
      name: 'delete projects only',
      scopes: ['project.read', 'project.delete'],
    });
    const r = await client(h, t.body.data.token).del<Answer>(`/platform/projects/${p.id}?force=true`);
    expect(r.status).toBe(403);
    expect(r.body.message).toMatch(/deployment\.manage/);
    expect((await api.get<{ status: string }>(`/compat/deployments/${d.body.deploymentId}`)).body.status).toBe(
      'running',
    );
    expect((await api.get(`/platform/projects/${p.id}`)).status).toBe(200);
    expect((await api.del(`/platform/projects/${p.id}?force=yes`)).status).toBe(400);
    await api.destroyAndWait(d.body.deploymentId!);
    // Once its deployments are gone, a plain delete goes through.
    expect((await api.del(`/platform/projects/${p.id}`)).status).toBe(204);
  }, 120_000);
});
