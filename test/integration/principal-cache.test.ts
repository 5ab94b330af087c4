import { randomUUID } from 'node:crypto';

import type { CommandStartedEvent } from 'mongodb';

import { createPrincipalCache } from '@shared/identity/principal-cache';
import { createLogger } from '@shared/logger';
import { PERMISSIONS } from '@shared/permissions';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { startSecondApi } from '../helpers/second-api';

type Body = { code?: string; status?: string; message?: string; data?: { id: string } };

/** What the design promises across processes, measured from the change's completion. */
const BOUND_MS = 1000;

/**
 * Principals kept in memory by each api process: a repeated request reads none from the database, and every change
 * that alters what a principal may do reaches another api process that holds it within BOUND_MS. "A" is the
 * harness's api, where changes are made; "B" is a second api over the same FerretDB and Redis whose principal reads
 * are counted.
 */
describe('Principal cache: no database read per request, changes honoured across api processes', () => {
  let h: Harness;
  let second: Awaited<ReturnType<typeof startSecondApi>>;
  /** B's reads of the collections a principal is made of. */
  const reads: CommandStartedEvent[] = [];

  beforeAll(async () => {
    h = await startHarness(
      'principal-cache',
      { RATE_LIMIT_PLATFORM_PER_15MIN: '100000', RATE_LIMIT_COMPAT_READS_PER_MIN: '100000' },
      { worker: false },
    );
    second = await startSecondApi(h, {
      log: createLogger('test', 'silent'),
      onCommand: (e) => {
        const collection = (e.command as Record<string, unknown>)[e.commandName];
        if (e.commandName === 'find' && ['tokens', 'orgs', 'users'].includes(String(collection))) reads.push(e);
      },
    });
  });
  afterAll(async () => {
    await second?.stop();
    await h?.stop();
  });

  const onA = (token: string) => client(h, token);
  const onB = (token: string) => client({ ...h, baseUrl: second.baseUrl }, token);

  /**
   * Sends `request` until it is refused; the refusal must come from a request sent within BOUND_MS of `since` (the
   * change's completion). A request sent in time but answered late still counts: on a loaded machine the answer may
   * take longer than the bound, the decision does not.
   */
  async function refusedWithin(since: number, request: () => Promise<{ status: number; body: Body }>) {
    for (;;) {
      const sentAfter = performance.now() - since;
      const r = await request();
      if (r.status === 401 || r.status === 403) return r;
      if (sentAfter > BOUND_MS) throw new Error(`still served ${Math.round(sentAfter)} ms after the change`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** A user of the org with `role` and a token holding every scope (the role decides). */
  async function member(orgId: string, role: 'admin' | 'developer') {
    const u = await h.identity.addUser({ orgId, email: `${role}-${randomUUID().slice(0, 8)}@example.test`, role });
    const t = await h.identity.createToken({ orgId, userId: u._id, name: role, scopes: [...PERMISSIONS] });
    return { userId: u._id, tokenId: t.id, token: t.token };
  }

  it('reads no principal from the database on a repeated request, and every refused one', async () => {
    const org = await h.newOrg();
    expect((await onB(org.token).get('/compat/providers')).status).toBe(200);
    reads.length = 0;
    for (let i = 0; i < 5; i++) expect((await onB(org.token).get('/compat/providers')).status).toBe(200);
    expect(reads).toEqual([]);

    // A refusal is never kept: each one is the database's answer, so a token is judged by its record every time.
    const unknown = `svc_${'A'.repeat(43)}`;
    for (let i = 0; i < 3; i++) expect((await onB(unknown).get('/compat/providers')).body.code).toBe('INVALID_TOKEN');
    expect(reads.filter((e) => String((e.command as { find: string }).find) === 'tokens')).toHaveLength(3);
  });

  it('refuses on B, within the bound, a token revoked through A while B had it cached', async () => {
    const owner = await h.newOrg();
    const dev = await member(owner.orgId, 'developer');
    expect((await onB(dev.token).get('/compat/providers')).status).toBe(200);
    reads.length = 0;
    expect((await onB(dev.token).get('/compat/providers')).status).toBe(200);
    expect(reads).toEqual([]);

    expect((await onA(owner.token).del(`/platform/tokens/${dev.tokenId}`)).status).toBe(204);
    const since = performance.now();
    const refused = await refusedWithin(since, () => onB(dev.token).get<Body>('/compat/providers'));
    expect(refused).toMatchObject({ status: 401, body: { code: 'INVALID_TOKEN' } });
    // And it stays refused.
    expect((await onB(dev.token).get<Body>('/compat/providers')).status).toBe(401);
  });

  it("applies on B, within the bound, a user's demotion made through A", async () => {
    const owner = await h.newOrg();
    const admin = await member(owner.orgId, 'admin');
    expect((await onB(admin.token).get('/platform/users')).status).toBe(200);
    expect((await onB(admin.token).get('/platform/users')).status).toBe(200);

    const demoted = await onA(owner.token).call('PATCH', `/platform/users/${admin.userId}`, { role: 'developer' });
    expect(demoted.status).toBe(200);
    const since = performance.now();
    const refused = await refusedWithin(since, () => onB(admin.token).get<Body>('/platform/users'));
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/role developer does not grant user.manage/);
  });

  it("applies on B, within the bound, a member's removal from a project made through A", async () => {
    const owner = await h.newOrg();
    const dev = await member(owner.orgId, 'developer');
    const project = await onA(owner.token).post<Body>('/platform/projects', { name: `p-${randomUUID().slice(0, 8)}` });
    const id = project.body.data!.id;
    expect(
      (await onA(owner.token).post(`/platform/projects/${id}/members`, { userId: dev.userId, role: 'viewer' })).status,
    ).toBe(200);
    expect((await onB(dev.token).get(`/platform/projects/${id}`)).status).toBe(200);
    expect((await onB(dev.token).get(`/platform/projects/${id}`)).status).toBe(200);

    expect((await onA(owner.token).del(`/platform/projects/${id}/members/${dev.userId}`)).status).toBe(204);
    const since = performance.now();
    // A project the caller no longer belongs to is one it cannot see.
    const gone = await (async () => {
      for (;;) {
        const sentAfter = performance.now() - since;
        const r = await onB(dev.token).get<Body>(`/platform/projects/${id}`);
        if (r.status === 404) return r;
        if (sentAfter > BOUND_MS) throw new Error(`still shown ${Math.round(sentAfter)} ms after the removal`);
      }
    })();
    expect(gone.body.message).toMatch(/No project/);
  });

  it('honours, within the bound, a change whose announcement was lost (the stamp check)', async () => {
    const org = await h.newOrg();
    expect((await onB(org.token).get('/compat/providers')).status).toBe(200);
    expect((await onB(org.token).get('/compat/providers')).status).toBe(200);

    // The revocation and the new stamp are written, but the message that would carry it is never published.
    const tokens = h.db.collection<{ _id: string; revokedAt?: Date }>('tokens');
    await tokens.updateOne({ _id: org.tokenId }, { $set: { revokedAt: new Date() } });
    await h.redis.set(`${h.config.REDIS_KEY_PREFIX}identity:stamp`, randomUUID());
    const since = performance.now();
    const refused = await refusedWithin(since, () => onB(org.token).get<Body>('/compat/providers'));
    expect(refused.body.code).toBe('INVALID_TOKEN');
  });

  it('refuses an expired token at once, though cached', async () => {
    const org = await h.newOrg();
    const t = await h.identity.createToken({
      orgId: org.orgId,
      userId: org.userId,
      name: 'short',
      scopes: ['deployment.read'],
      // Room for the two requests before it expires, on a loaded machine.
      expiresInS: 5,
    });
    expect((await onB(t.token).get('/compat/providers')).status).toBe(200);
    reads.length = 0;
    expect((await onB(t.token).get('/compat/providers')).status).toBe(200);
    expect(reads).toEqual([]);

    while (Date.now() <= t.expiresAt.getTime()) await new Promise((resolve) => setTimeout(resolve, 20));
    const r = await onB(t.token).get<Body>('/compat/providers');
    expect(r).toMatchObject({ status: 401, body: { code: 'TOKEN_EXPIRED' } });
  });

  it('keeps at most its bound of principals, dropping the least recently used', async () => {
    const cache = createPrincipalCache<string>({
      redis: h.redis,
      keyPrefix: `${h.config.REDIS_KEY_PREFIX}lru:`,
      maxEntries: 2,
    });
    const loads: string[] = [];
    const resolve = (key: string) =>
      cache.resolve(key, async () => {
        loads.push(key);
        return `principal of ${key}`;
      });
    for (const key of ['a', 'b', 'a', 'c', 'a', 'b']) expect(await resolve(key)).toBe(`principal of ${key}`);
    // 'a' was used after 'b', so 'c' pushed 'b' out; 'a' stayed.
    expect(loads).toEqual(['a', 'b', 'c', 'b']);
  });
});
