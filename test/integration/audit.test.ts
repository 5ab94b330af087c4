import { randomUUID } from 'node:crypto';

import { createAuditStore } from '@shared/audit/store';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Body = Record<string, unknown>;
interface Event {
  id: string;
  at: string;
  orgId: string;
  projectId: string | null;
  actor: { type: string; userId: string | null; tokenId: string | null };
  action: string;
  resource: { type: string; id: string | null };
  outcome: 'success' | 'failure' | 'denied';
  status: number;
  origin: string;
  ip: string | null;
  userAgent: string | null;
  requestId: string;
}
interface Page {
  data: { events: Event[]; nextCursor: string | null };
}
interface Doc {
  paths: Record<string, Record<string, { requestBody?: unknown }>>;
}

const MUTATING = ['post', 'put', 'patch', 'delete'];

describe('audit trail: every mutating call of both APIs, append-only, without secrets', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      'audit',
      {
        RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
        RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
        RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
        ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
      },
      { worker: false },
    );
  });
  afterAll(() => h?.stop());

  /** Every event of the organisation, through the API, newest first. */
  async function trail(api: ReturnType<typeof client>, query = ''): Promise<Event[]> {
    const all: Event[] = [];
    let cursor: string | null = null;
    do {
      const sep = query ? '&' : '';
      const r: { status: number; body: Page } = await api.get<Page>(
        `/platform/audit?${query}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(r.status).toBe(200);
      all.push(...r.body.data.events);
      cursor = r.body.data.nextCursor;
    } while (cursor);
    return all;
  }

  it('records one event for each mutating route of /openapi.json, with the status answered, before the answer ends', async () => {
    const org = await h.newOrg('enterprise');
    const a = client(h, org.token);
    const doc = (await (await fetch(`${h.baseUrl}/openapi.json`)).json()) as Doc;
    const calls: { key: string; requestId: string; status: number }[] = [];
    for (const [template, ops] of Object.entries(doc.paths)) {
      if (!template.startsWith('/compat') && !template.startsWith('/platform')) continue;
      for (const method of Object.keys(ops).filter((m) => MUTATING.includes(m))) {
        const url = template.replace(/\{\w+\}/g, () => randomUUID());
        const requestId = `audit-${randomUUID()}`;
        const r = await a.call(method.toUpperCase(), url, ops[method]!.requestBody ? {} : undefined, {
          'x-request-id': requestId,
          'user-agent': 'audit-test/1',
        });
        calls.push({ key: `${method.toUpperCase()} ${template}`, requestId, status: r.status });
      }
    }
    expect(calls.length).toBeGreaterThanOrEqual(20);
    // Read at once: each event was written before its response ended.
    const byRequest = new Map((await trail(a)).map((e) => [e.requestId, e]));
    for (const c of calls) {
      const e = byRequest.get(c.requestId);
      expect([c.key, e && { status: e.status, outcome: e.outcome }]).toEqual([
        c.key,
        {
          status: c.status,
          outcome: c.status < 400 ? 'success' : [403, 404].includes(c.status) ? 'denied' : 'failure',
        },
      ]);
      expect([c.key, e!.action]).toEqual([c.key, expect.stringMatching(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/)]);
      expect(e).toMatchObject({
        orgId: org.orgId,
        actor: { type: 'token', userId: org.userId, tokenId: org.tokenId },
        userAgent: 'audit-test/1',
        ip: expect.any(String),
        origin: c.key.includes(' /compat') ? 'compat' : 'platform',
      });
    }
    // Reads are not recorded.
    const before = (await trail(a)).length;
    await a.get('/compat/deployments');
    await a.get('/platform/secrets');
    expect((await trail(a)).length).toBe(before);
  });

  it('names actions and resources from the route, and the created resource’s ID', async () => {
    const org = await h.newOrg('enterprise');
    const a = client(h, org.token);
    const secret = (await a.post<{ data: { id: string } }>('/platform/secrets', { name: 'n', value: 'v1' })).body.data
      .id;
    const deployed = await a.post<Body>('/compat/deploy', { image: 'slipway-test/none:1', name: 'audited' });
    expect(deployed.status).toBe(202);
    const id = deployed.body.deploymentId as string;
    expect((await a.del(`/compat/deployments/${id}`)).status).toBe(204);
    expect((await a.del(`/platform/secrets/${secret}`)).status).toBe(204);
    const project = await a.post<{ data: { id: string } }>('/platform/projects', { name: 'audited' });
    const projectId = project.body.data.id;
    expect((await a.call('PUT', `/platform/projects/${projectId}`, { description: 'changed' })).status).toBe(200);

    const events = await trail(a);
    const of = (action: string) => events.filter((e) => e.action === action);
    expect(of('secret.create')).toEqual([
      expect.objectContaining({ resource: { type: 'secret', id: secret }, outcome: 'success' }),
    ]);
    expect(of('secret.delete')).toEqual([expect.objectContaining({ resource: { type: 'secret', id: secret } })]);
    expect(of('deployment.create')).toEqual([
      expect.objectContaining({ resource: { type: 'deployment', id }, status: 202, origin: 'compat' }),
    ]);
    expect(of('deployment.delete')).toEqual([
      expect.objectContaining({ resource: { type: 'deployment', id }, status: 204 }),
    ]);
    expect(of('project.create')).toEqual([
      expect.objectContaining({ resource: { type: 'project', id: projectId }, projectId }),
    ]);
    expect(of('project.update')).toEqual([
      expect.objectContaining({ resource: { type: 'project', id: projectId }, projectId }),
    ]);
  });

  it('records refused attempts as denied: another organisation’s resource (404) and a missing permission (403)', async () => {
    const orgA = await h.newOrg('enterprise');
    const a = client(h, orgA.token);
    const orgB = await h.newOrg('enterprise');
    const b = client(h, orgB.token);
    const id = (await a.post<Body>('/compat/deploy', { image: 'slipway-test/none:1', name: 'target' })).body
      .deploymentId as string;
    expect((await b.del(`/compat/deployments/${id}`)).status).toBe(404);
    const viewer = await h.identity.addUser({
      orgId: orgB.orgId,
      email: `v-${randomUUID()}@example.com`,
      role: 'viewer',
    });
    const vt = await h.identity.createToken({
      orgId: orgB.orgId,
      userId: viewer._id,
      name: 'v',
      scopes: ['deployment.create'],
    });
    expect((await client(h, vt.token).post('/compat/deploy', { image: 'x/y:1', name: 'no' })).status).toBe(403);

    const denied = await trail(b, 'outcome=denied');
    expect(denied).toEqual([
      expect.objectContaining({
        action: 'deployment.create',
        status: 403,
        actor: expect.objectContaining({ userId: viewer._id, tokenId: vt.id }),
      }),
      expect.objectContaining({ action: 'deployment.delete', status: 404, resource: { type: 'deployment', id } }),
    ]);
    // A's trail shows only A's own calls.
    expect((await trail(a)).map((e) => e.action)).toEqual(['deployment.create']);
    await a.del(`/compat/deployments/${id}`);
  });

  it('never stores a secret value: request values, returned keys, tokens and signing secrets', async () => {
    const org = await h.newOrg('enterprise');
    const a = client(h, org.token);
    const secretValue = `s3cr3t-${randomUUID()}`;
    const envValue = `env-${randomUUID()}`;
    expect(
      (await a.post('/platform/secrets', { name: 'git', value: secretValue, allowedHosts: ['git.example.com'] }))
        .status,
    ).toBe(200);
    const d = await a.post<Body>('/compat/deploy', {
      image: 'slipway-test/none:1',
      name: 'env',
      envVars: { KEY: envValue },
    });
    const token = (
      await a.post<{ data: { token: string } }>('/platform/tokens', { name: 'ci', scopes: ['deployment.read'] })
    ).body.data.token;
    const webhook = await a.call<{ data: { secret: string } }>('PUT', '/platform/sales/webhook', {
      url: 'http://127.0.0.1:9/hook',
    });
    const apiKey = (await a.post<{ data: { apiKey: string } }>('/platform/sales/api-keys')).body.data.apiKey;
    // A refused body that carries a secret is not stored either.
    expect((await a.post('/platform/secrets', { name: 'bad name!', value: secretValue })).status).toBe(400);

    const stored = await h.db.collection('audit_events').find({ orgId: org.orgId }).toArray();
    expect(stored.length).toBeGreaterThanOrEqual(6);
    const text = JSON.stringify(stored);
    for (const value of [secretValue, envValue, token, webhook.body.data.secret, apiKey, org.token])
      expect(text.includes(value)).toBe(false);
    await a.del(`/compat/deployments/${d.body.deploymentId as string}`);
  });

  it('filters by actor, action, resource, project, outcome and time, newest first, with a cursor that neither skips nor repeats', async () => {
    const org = await h.newOrg('enterprise');
    const a = client(h, org.token);
    const t2 = (
      await a.post<{ data: { id: string; token: string } }>('/platform/tokens', {
        name: 'second',
        scopes: ['secret.manage'],
      })
    ).body.data;
    const second = client(h, t2.token);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(
        (await second.post<{ data: { id: string } }>('/platform/secrets', { name: `s${i}`, value: 'v' })).body.data.id,
      );
    const project = (await a.post<{ data: { id: string } }>('/platform/projects', { name: 'filtered' })).body.data.id;
    await a.call('PUT', `/platform/projects/${project}`, { description: 'd' });
    await a.post('/platform/secrets', { name: 's0', value: 'dup' }); // 409: a failure

    const all = await trail(a);
    const sorted = [...all].sort((x, y) => (x.at === y.at ? (x.id < y.id ? 1 : -1) : x.at < y.at ? 1 : -1));
    expect(all.map((e) => e.id)).toEqual(sorted.map((e) => e.id));

    expect((await trail(a, `actor=${t2.id}`)).map((e) => e.resource.id)).toEqual([...ids].reverse());
    expect((await trail(a, `actor=${org.userId}`)).length).toBe(all.length);
    expect((await trail(a, 'action=secret.create')).length).toBe(6);
    expect((await trail(a, `resourceType=secret&resourceId=${ids[2]}`)).map((e) => e.action)).toEqual([
      'secret.create',
    ]);
    expect((await trail(a, `projectId=${project}`)).map((e) => e.action)).toEqual(['project.update', 'project.create']);
    expect((await trail(a, 'outcome=failure')).map((e) => e.status)).toEqual([409]);
    const middle = all[Math.floor(all.length / 2)]!;
    const since = await trail(a, `since=${encodeURIComponent(middle.at)}`);
    const until = await trail(a, `until=${encodeURIComponent(middle.at)}`);
    expect(since.every((e) => e.at >= middle.at) && until.every((e) => e.at < middle.at)).toBe(true);
    expect(since.length + until.length).toBe(all.length);

    // Pages of two, cursor to cursor: the same events in the same order as one page.
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const r: { body: Page } = await a.get<Page>(`/platform/audit?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.body.data.events.length).toBeLessThanOrEqual(2);
      paged.push(...r.body.data.events.map((e) => e.id));
      cursor = r.body.data.nextCursor;
    } while (cursor);
    expect(paged).toEqual(all.map((e) => e.id));
    expect((await a.get('/platform/audit?cursor=not-a-cursor')).status).toBe(400);
    expect((await a.get('/platform/audit?outcome=maybe')).status).toBe(400);
  });

  it('is read-only: no route edits or deletes an event, the store has no such method, and only owners and admins read it', async () => {
    const org = await h.newOrg('enterprise');
    const a = client(h, org.token);
    await a.post('/platform/secrets', { name: 'x', value: 'y' });
    const [event] = await trail(a);
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'])
      expect([method, (await a.call(method, '/platform/audit', {})).status]).toEqual([method, 405]);
    for (const method of ['GET', 'PUT', 'PATCH', 'DELETE'])
      expect([
        method,
        (await a.call(method, `/platform/audit/${event!.id}`, method === 'GET' ? undefined : {})).status,
      ]).toEqual([method, 404]);
    expect((await trail(a)).map((e) => e.id)).toContain(event!.id);
    expect(Object.keys(createAuditStore(h.db)).sort()).toEqual(['append', 'ensureIndexes', 'list']);

    const dev = await h.identity.addUser({
      orgId: org.orgId,
      email: `d-${randomUUID()}@example.com`,
      role: 'developer',
    });
    const dt = await h.identity.createToken({ orgId: org.orgId, userId: dev._id, name: 'd', scopes: ['audit.read'] });
    expect((await client(h, dt.token).get('/platform/audit')).status).toBe(403);
  });

  it('GET /platform/tokens/current: the token, its user and org, what it may do, and budgets read without spending', async () => {
    const org = await h.newOrg('pro');
    const a = client(h, org.token);
    const dev = await h.identity.addUser({
      orgId: org.orgId,
      email: `dev-${randomUUID()}@example.com`,
      role: 'developer',
    });
    const t = await h.identity.createToken({
      orgId: org.orgId,
      userId: dev._id,
      name: 'agent',
      scopes: ['deployment.read', 'deployment.create', 'user.manage'],
    });
    const agent = client(h, t.token);
    type Current = {
      data: {
        id: string;
        name: string;
        scopes: string[];
        expiresAt: string;
        user: Body;
        org: Body;
        permissions: string[];
        actsAsProjectAdmin: boolean;
        limits: Record<string, { limit: number; remaining: number; windowSeconds: number; per: string }>;
      };
    };
    const first = await agent.get<Current>('/platform/tokens/current');
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({
      id: t.id,
      name: 'agent',
      scopes: ['deployment.read', 'deployment.create', 'user.manage'],
      expiresAt: t.expiresAt.toISOString(),
      user: { id: dev._id, email: dev.email, role: 'developer' },
      org: { id: org.orgId, name: 'test-audit', plan: 'pro' },
      // user.manage is in the token but not in the developer role.
      permissions: ['deployment.read', 'deployment.create'],
      actsAsProjectAdmin: false,
    });
    const limits = first.body.data.limits;
    expect(limits.platform).toMatchObject({ limit: 100000, windowSeconds: 900, per: 'token', remaining: 100000 - 1 });
    expect(limits.compatReads).toMatchObject({ remaining: 100000, per: 'org' });
    expect(limits.deployCreate).toMatchObject({ remaining: 100000, per: 'user' });

    // Reading spends only the platform request itself; a compat read and a deploy spend their own budgets.
    await agent.get('/compat/deployments');
    await agent.post('/compat/deploy', { image: 42 });
    const second = (await agent.get<Current>('/platform/tokens/current')).body.data.limits;
    expect(second.platform!.remaining).toBe(100000 - 2);
    expect(second.compatReads!.remaining).toBe(100000 - 1);
    expect(second.deployCreate!.remaining).toBe(100000 - 1);
    expect(second.compatWrites!.remaining).toBe(100000 - 1);
    // Any valid token may read itself, whatever its scopes; the owner's says it acts as admin of every project.
    expect((await a.get<Current>('/platform/tokens/current')).body.data.actsAsProjectAdmin).toBe(true);
    expect((await client(h, 'svc_' + 'x'.repeat(43)).get('/platform/tokens/current')).status).toBe(401);
  });
});
