import { randomUUID } from 'node:crypto';

import { PERMISSIONS } from '@shared/permissions';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Api = ReturnType<typeof client>;
type Answer<T = unknown> = { status: string; data: T; message?: string };
interface Member {
  userId: string;
  email?: string;
  role: string;
  addedAt: string;
  addedBy: string;
}

describe('platform API: project members', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('members', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000' }, { worker: false });
  });
  afterAll(() => h?.stop());

  /** A user of the org with `role` and a token holding every scope (the roles decide). */
  async function user(orgId: string, role: 'owner' | 'admin' | 'developer' | 'viewer') {
    const email = `${role}-${randomUUID().slice(0, 8)}@example.test`;
    const u = await h.identity.addUser({ orgId, email, role });
    const t = await h.identity.createToken({ orgId, userId: u._id, name: role, scopes: [...PERMISSIONS] });
    return { userId: u._id, email, api: client(h, t.token) };
  }
  const project = async (api: Api, name = `p-${randomUUID().slice(0, 8)}`) => {
    const r = await api.post<Answer<{ id: string }>>('/platform/projects', { name });
    expect(r.status).toBe(200);
    return r.body.data.id;
  };
  const members = (api: Api, id: string) => api.get<Answer<Member[]>>(`/platform/projects/${id}/members`);
  const add = (api: Api, id: string, body: unknown) =>
    api.post<Answer<Member>>(`/platform/projects/${id}/members`, body);
  const patch = (api: Api, id: string, userId: string, body: unknown) =>
    api.call<Answer<Member>>('PATCH', `/platform/projects/${id}/members/${userId}`, body);
  const remove = (api: Api, id: string, userId: string) =>
    api.del<Answer>(`/platform/projects/${id}/members/${userId}`);
  const adminsOf = async (id: string) =>
    h.db.collection('project_members').countDocuments({ projectId: id, role: 'admin' });

  it('adds, lists, changes and removes members; a second add is 409, bad input 400', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const id = await project(api);
    const dev = await user(owner.orgId, 'developer');

    const added = await add(api, id, { userId: dev.userId, role: 'viewer' });
    expect(added.status).toBe(200);
    expect(added.body.data).toMatchObject({
      userId: dev.userId,
      email: dev.email,
      role: 'viewer',
      addedBy: owner.userId,
    });
    const list = await members(api, id);
    expect(list.body.data.map((m) => [m.userId, m.role])).toEqual([
      [owner.userId, 'admin'],
      [dev.userId, 'viewer'],
    ]);

    const again = await add(api, id, { userId: dev.userId, role: 'developer' });
    expect([again.status, again.body.status]).toEqual([409, 'error']);
    expect(again.body.message).toMatch(/already a member/);
    expect((await members(api, id)).body.data.find((m) => m.userId === dev.userId)?.role).toBe('viewer');

    for (const body of [
      {},
      { userId: dev.userId },
      { userId: dev.userId, role: 'owner' },
      { userId: 'someone', role: 'viewer' },
      { userId: dev.userId, role: 'viewer', extra: 1 },
    ]) {
      expect([(await add(api, id, body)).status, body]).toEqual([400, body]);
    }
    expect((await patch(api, id, dev.userId, { role: 'superuser' })).status).toBe(400);
    expect((await patch(api, id, dev.userId, {})).status).toBe(400);

    const changed = await patch(api, id, dev.userId, { role: 'developer' });
    expect([changed.status, changed.body.data.role]).toEqual([200, 'developer']);
    expect((await members(api, id)).body.data.find((m) => m.userId === dev.userId)?.role).toBe('developer');

    expect((await remove(api, id, dev.userId)).status).toBe(204);
    const gone = await remove(api, id, dev.userId);
    expect([gone.status, gone.body.message]).toEqual([404, expect.stringMatching(/not a member/)]);
    expect((await patch(api, id, dev.userId, { role: 'viewer' })).status).toBe(404);
    expect((await members(api, id)).body.data.map((m) => m.userId)).toEqual([owner.userId]);
  });

  it('takes only users of the organisation: another organisation’s user and an unknown one are 404', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const id = await project(api);
    const other = await h.newOrg();
    for (const userId of [other.userId, randomUUID()]) {
      const r = await add(api, id, { userId, role: 'viewer' });
      expect([r.status, r.body.status]).toEqual([404, 'error']);
      expect(r.body.message).toMatch(/No user .* in this organisation/);
    }
    expect((await members(api, id)).body.data).toHaveLength(1);
    // And no route reaches a project of another organisation, even naming its own user.
    const otherApi = client(h, other.token);
    expect((await add(otherApi, id, { userId: other.userId, role: 'admin' })).status).toBe(404);
    expect((await patch(otherApi, id, owner.userId, { role: 'viewer' })).status).toBe(404);
    expect((await remove(otherApi, id, owner.userId)).status).toBe(404);
    expect((await members(otherApi, id)).status).toBe(404);
    expect(await adminsOf(id)).toBe(1);
  });

  it('keeps the last admin: it cannot be demoted or removed until another member is admin', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const id = await project(api);
    const dev = await user(owner.orgId, 'developer');
    expect((await add(api, id, { userId: dev.userId, role: 'developer' })).status).toBe(200);

    const demote = await patch(api, id, owner.userId, { role: 'developer' });
    expect([demote.status, demote.body.status]).toEqual([400, 'error']);
    expect(demote.body.message).toMatch(/last admin of project .* cannot be demoted; make another member admin first/);
    const drop = await remove(api, id, owner.userId);
    expect(drop.status).toBe(400);
    expect(drop.body.message).toMatch(/last admin .* cannot be removed/);
    // Re-affirming the admin role is no demotion.
    expect((await patch(api, id, owner.userId, { role: 'admin' })).status).toBe(200);

    expect((await patch(api, id, dev.userId, { role: 'admin' })).status).toBe(200);
    expect((await patch(api, id, owner.userId, { role: 'viewer' })).status).toBe(200);
    // Now the developer is the one admin, and holds the project: the owner (org owner) still manages it.
    expect((await remove(api, id, dev.userId)).status).toBe(400);
    expect((await remove(api, id, owner.userId)).status).toBe(204);
    expect((await members(api, id)).body.data.map((m) => [m.userId, m.role])).toEqual([[dev.userId, 'admin']]);
  });

  it('keeps an admin under concurrent demotions and removals of the last two admins', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    for (let round = 0; round < 6; round++) {
      const id = await project(api);
      const second = await user(owner.orgId, 'developer');
      expect((await add(api, id, { userId: second.userId, role: 'admin' })).status).toBe(200);
      // Both admins are changed at once, each by one request: only one change may win, whoever asks.
      const variants = [
        () => [patch(api, id, owner.userId, { role: 'viewer' }), patch(api, id, second.userId, { role: 'developer' })],
        () => [remove(api, id, owner.userId), remove(api, id, second.userId)],
        () => [
          patch(second.api, id, owner.userId, { role: 'viewer' }),
          patch(api, id, second.userId, { role: 'viewer' }),
        ],
      ];
      const statuses = (await Promise.all(variants[round % variants.length]!())).map((r) => r.status);
      expect([round, await adminsOf(id)]).toEqual([round, 1]);
      expect([round, statuses.filter((s) => s === 200 || s === 204).length]).toEqual([round, 1]);
      // The other is refused as leaving no admin (or, when its asker was the one demoted first, for want of the role).
      expect([round, statuses.filter((s) => s === 400 || s === 403).length]).toEqual([round, 1]);
    }
  });

  it('lets project admins manage members and project developers and viewers only read them; non-members see 404', async () => {
    const owner = await h.newOrg();
    const api = client(h, owner.token);
    const id = await project(api);
    const lead = await user(owner.orgId, 'developer');
    const dev = await user(owner.orgId, 'developer');
    const viewer = await user(owner.orgId, 'viewer');
    const outsider = await user(owner.orgId, 'developer');
    const orgAdmin = await user(owner.orgId, 'admin');
    expect((await add(api, id, { userId: lead.userId, role: 'admin' })).status).toBe(200);
    expect((await add(lead.api, id, { userId: dev.userId, role: 'developer' })).status).toBe(200);
    expect((await add(lead.api, id, { userId: viewer.userId, role: 'viewer' })).status).toBe(200);

    for (const who of [dev, viewer]) {
      expect((await members(who.api, id)).status).toBe(200);
      const r = await add(who.api, id, { userId: outsider.userId, role: 'viewer' });
      expect([r.status, r.body.message]).toEqual([403, expect.stringMatching(/project\.members\.manage/)]);
      expect((await patch(who.api, id, who.userId, { role: 'admin' })).status).toBe(403);
      expect((await remove(who.api, id, lead.userId)).status).toBe(403);
    }
    for (const r of [
      await members(outsider.api, id),
      await add(outsider.api, id, { userId: outsider.userId, role: 'admin' }),
      await patch(outsider.api, id, outsider.userId, { role: 'admin' }),
    ])
      expect(r.status).toBe(404);
    // An org admin acts as admin of every project without being a member.
    expect((await add(orgAdmin.api, id, { userId: outsider.userId, role: 'viewer' })).status).toBe(200);
    expect((await patch(lead.api, id, outsider.userId, { role: 'developer' })).status).toBe(200);
    expect((await remove(lead.api, id, outsider.userId)).status).toBe(204);
  });
});
