import { randomUUID } from 'node:crypto';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

interface Token {
  id: string;
  token?: string;
  name: string;
  scopes: string[];
  expiresAt: string;
  revokedAt: string | null;
}

describe('platform API: access tokens and the platform frame', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('platform');
  });
  afterAll(() => h?.stop());

  it('creates a token shown once, lists without secrets, and revokes it at once', async () => {
    const api = client(h, (await h.newOrg()).token);
    const created = await api.post<{ status: string; data: Token }>('/platform/tokens', {
      name: 'ci',
      scopes: ['deployment.read'],
      expiresIn: '1h',
    });
    expect(created.status).toBe(200);
    expect(created.body.status).toBe('success');
    expect(created.body.data).toMatchObject({ name: 'ci', scopes: ['deployment.read'], revokedAt: null });
    expect(created.body.data.token).toMatch(/^svc_[0-9A-Za-z]{43}$/);
    const ttl = Date.parse(created.body.data.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(3500_000);
    expect(ttl).toBeLessThanOrEqual(3600_000);

    const fresh = client(h, created.body.data.token);
    expect((await fresh.get('/compat/deployments')).status).toBe(200);
    expect((await fresh.post<{ code: string }>('/compat/deploy', { image: 'x', name: 'y' })).body.code).toBe(
      'INSUFFICIENT_SCOPE',
    );

    const list = await api.get<{ status: string; data: Token[] }>('/platform/tokens');
    expect(list.body.status).toBe('success');
    expect(list.body.data.map((t) => t.name).sort()).toEqual(['bootstrap', 'ci']);
    expect(JSON.stringify(list.body)).not.toContain(created.body.data.token);

    expect((await api.del(`/platform/tokens/${created.body.data.id}`)).status).toBe(204);
    expect((await fresh.get<{ code: string }>('/compat/deployments')).body.code).toBe('INVALID_TOKEN');
    expect((await api.del(`/platform/tokens/${created.body.data.id}`)).status).toBe(404);
  });

  it('refuses a lifetime under a minute, which would issue a token already expired or about to be', async () => {
    const api = client(h, (await h.newOrg()).token);
    for (const expiresIn of ['0s', '59s', 0, 59, '0m', '0d']) {
      const r = await api.post<{ status: string; message: string }>('/platform/tokens', {
        name: 'short',
        scopes: ['deployment.read'],
        expiresIn,
      });
      expect([expiresIn, r.status]).toEqual([expiresIn, 400]);
      expect(r.body).toEqual({ status: 'error', message: expect.stringMatching(/at least 60 seconds/) });
    }
    const minute = await api.post<{ data: Token }>('/platform/tokens', {
      name: 'minute',
      scopes: ['deployment.read'],
      expiresIn: '1m',
    });
    expect(minute.status).toBe(200);
    expect((await client(h, minute.body.data.token).get('/compat/deployments')).status).toBe(200);
    expect((await api.get<{ data: Token[] }>('/platform/tokens')).body.data.map((t) => t.name).sort()).toEqual([
      'bootstrap',
      'minute',
    ]);
  });

  it('lets a user grant only scopes their role and token hold', async () => {
    const org = await h.newOrg();
    const dev = await h.identity.addUser({
      orgId: org.orgId,
      email: `dev-${randomUUID()}@example.com`,
      role: 'developer',
    });
    const devToken = await h.identity.createToken({
      orgId: org.orgId,
      userId: dev._id,
      name: 'dev',
      scopes: ['token.manage', 'deployment.read'],
    });
    const api = client(h, devToken.token);
    const beyondRole = await api.post('/platform/tokens', { name: 'x', scopes: ['project.delete'] });
    expect(beyondRole.status).toBe(403);
    expect(beyondRole.body).toEqual({ status: 'error', message: expect.stringMatching(/project\.delete/) });
    const beyondToken = await api.post('/platform/tokens', { name: 'x', scopes: ['deployment.create'] });
    expect(beyondToken.status).toBe(403);
    expect((await api.post('/platform/tokens', { name: 'x', scopes: ['deployment.read'] })).status).toBe(200);
  });

  it('answers in the PlatformError shape: 401, 400 and 404', async () => {
    const noToken = await client(h).get('/platform/tokens');
    expect(noToken.status).toBe(401);
    expect(noToken.body).toEqual({ status: 'error', message: expect.any(String) });
    const api = client(h, (await h.newOrg()).token);
    const bad = await api.post('/platform/tokens', { name: '', scopes: ['nope'] });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ status: 'error', message: expect.stringMatching(/Invalid body/) });
    expect((await api.del(`/platform/tokens/${randomUUID()}`)).status).toBe(404);
    const missingRoute = await api.get('/platform/nothing-here');
    expect(missingRoute.status).toBe(404);
    expect(missingRoute.body).toMatchObject({ status: 'error' });
  });

  it('refuses tokens.manage to a token without that scope', async () => {
    const org = await h.newOrg();
    const t = await h.identity.createToken({
      orgId: org.orgId,
      userId: org.userId,
      name: 'ro',
      scopes: ['deployment.read'],
    });
    const r = await client(h, t.token).get('/platform/tokens');
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ status: 'error', message: expect.stringMatching(/token\.manage/) });
  });
});
