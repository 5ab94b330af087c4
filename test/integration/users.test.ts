import { randomUUID } from 'node:crypto';

import { PERMISSIONS } from '@shared/permissions';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Api = ReturnType<typeof client>;
type Answer<T = unknown> = { status: string; data: T; message?: string };
interface User {
  id: string;
  email: string;
  name?: string;
  role: string;
  createdAt: string;
}

describe('platform API: users of an organisation', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('users', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' }, { worker: false });
  });
  afterAll(() => h?.stop());

  const email = (who: string) => `${who}-${randomUUID().slice(0, 8)}@example.test`;
  const addUser = (api: Api, body: unknown) => api.post<Answer<User>>('/platform/users', body);
  const setRole = (api: Api, id: string, role: unknown) =>
    api.call<Answer<User>>('PATCH', `/platform/users/${id}`, { role });
  /** A token with every scope for a new user of the org: its role decides. */
  async function tokenFor(orgId: string, userId: string) {
    return client(h, (await h.identity.createToken({ orgId, userId, name: 't', scopes: [...PERMISSIONS] })).token);
  }

  it('adds a user the CLI way (identity.addUser), lists them, and refuses a second e-mail or bad input', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const address = email('Dev');
    const created = await addUser(api, { email: address, name: 'Dee Veloper', role: 'developer' });
    expect(created.status).toBe(200);
    expect(created.body.data).toMatchObject({ email: address.toLowerCase(), name: 'Dee Veloper', role: 'developer' });
    const record = await h.db.collection('users').findOne({ _id: created.body.data.id as never });
    expect(record).toMatchObject({ orgId: owner.orgId, email: address.toLowerCase(), role: 'developer' });

    const list = await api.get<Answer<User[]>>('/platform/users');
    expect(list.body.data.map((u) => [u.id, u.role]).sort()).toEqual(
      [
        [owner.userId, 'owner'],
        [created.body.data.id, 'developer'],
      ].sort(),
    );

    // The same address in other case is the same user.
    const dup = await addUser(api, { email: address.toUpperCase(), role: 'viewer' });
    expect([dup.status, dup.body.status]).toEqual([409, 'error']);
    expect(dup.body.message).toMatch(/already exists/);
    for (const body of [
      {},
      { email: 'not-an-address', role: 'viewer' },
      { email: email('x'), role: 'root' },
      { email: email('x') },
      { email: email('x'), role: 'viewer', password: 'hunter2' },
    ])
      expect([(await addUser(api, body)).status, body]).toEqual([400, body]);

    // The new user is a user like any other: with a token, they work under their role.
    const dev = await tokenFor(owner.orgId, created.body.data.id);
    expect((await dev.post('/platform/projects', { name: 'by-dev' })).status).toBe(200);
  });

  it('is for owners and admins; an admin cannot make or unmake an owner', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const admin = (await addUser(api, { email: email('admin'), role: 'admin' })).body.data;
    const adminApi = await tokenFor(owner.orgId, admin.id);
    const dev = (await addUser(adminApi, { email: email('dev'), role: 'developer' })).body.data;
    expect(dev.role).toBe('developer');

    const ownerByAdmin = await addUser(adminApi, { email: email('boss'), role: 'owner' });
    expect([ownerByAdmin.status, ownerByAdmin.body.message]).toEqual([403, expect.stringMatching(/Only an owner/)]);
    expect((await setRole(adminApi, dev.id, 'owner')).status).toBe(403);
    expect((await setRole(adminApi, owner.userId, 'viewer')).status).toBe(403);
    expect((await setRole(adminApi, dev.id, 'viewer')).body.data.role).toBe('viewer');

    for (const role of ['developer', 'viewer'] as const) {
      const u = (await addUser(api, { email: email(role), role })).body.data;
      const asThem = await tokenFor(owner.orgId, u.id);
      expect((await asThem.get('/platform/users')).status).toBe(403);
      expect((await addUser(asThem, { email: email('x'), role: 'viewer' })).status).toBe(403);
      expect((await setRole(asThem, u.id, 'admin')).status).toBe(403);
    }
    // A token without user.manage is refused even for an owner.
    const t = await api.post<Answer<{ token: string }>>('/platform/tokens', { name: 'r', scopes: ['project.read'] });
    expect((await client(h, t.body.data.token).get('/platform/users')).status).toBe(403);
  });

  it('changes roles, keeps the last owner (also under concurrent demotions), and 404s other organisations’ users', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const last = await setRole(api, owner.userId, 'admin');
    expect([last.status, last.body.message]).toEqual([
      400,
      expect.stringMatching(/last owner .* make another user owner first/),
    ]);
    expect((await setRole(api, owner.userId, 'owner')).status).toBe(200);
    expect((await setRole(api, owner.userId, 'boss')).status).toBe(400);

    const other = await h.newOrg();
    expect((await setRole(api, other.userId, 'viewer')).status).toBe(404);
    expect((await setRole(api, randomUUID(), 'viewer')).status).toBe(404);
    expect((await client(h, other.token).get<Answer<User[]>>('/platform/users')).body.data.map((u) => u.id)).toEqual([
      other.userId,
    ]);

    for (let round = 0; round < 4; round++) {
      const second = (await addUser(api, { email: email('co-owner'), role: 'owner' })).body.data;
      // The first owner is the one a failed round keeps, so each round starts from two owners.
      const results = await Promise.all([setRole(api, second.id, 'admin'), setRole(api, owner.userId, 'admin')]);
      const owners = await h.db.collection('users').countDocuments({ orgId: owner.orgId, role: 'owner' });
      expect([round, owners]).toEqual([round, 1]);
      // The loser is refused either way: 400 when the other owner went first (this would leave no owner), or 403
      // when the caller's own demotion went first (an admin cannot change an owner's role).
      const statuses = results.map((r) => r.status).sort();
      expect([round, statuses[0]]).toEqual([round, 200]);
      expect([400, 403]).toContain(statuses[1]);
      if ((await h.db.collection('users').findOne({ _id: owner.userId as never }))?.role !== 'owner') {
        // The second owner won: hand ownership back for the next round.
        const back = await tokenFor(owner.orgId, second.id);
        expect((await setRole(back, owner.userId, 'owner')).status).toBe(200);
      }
      expect((await setRole(api, second.id, 'viewer')).status).toBe(200);
    }
  });
});
