import { randomUUID } from 'node:crypto';

import { createQuota, quotaRecords } from '@api/features/deployments/quota';
import { createDeploymentStore } from '@shared/deployments/store';
import type { DeploymentRecord } from '@shared/deployments/types';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';

type Body = { code?: string; deploymentId?: string; details?: Record<string, unknown> };

/**
 * The free plan allows 3 live deployments. No worker runs here: a deploy's record and workflow are what count,
 * and nothing has to start a container to show it (30 concurrent deploys once made 30 containers).
 */
const unlimited = {
  RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
  RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
  RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
};

function helpers(h: Harness) {
  const store = createDeploymentStore(h.db);
  const deploys = async (token: string, n: number) => {
    const all = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        client(h, token).post<Body>('/compat/deploy', { image: 'slipway-test/quota:1', name: `q${i}` }),
      ),
    );
    const accepted = all.filter((r) => r.status === 202).map((r) => r.body.deploymentId!);
    const refused = all.filter((r) => r.status !== 202);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.body).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { plan: 'free', limit: 3 } });
    }
    return accepted;
  };
  /** What the quota is about: records that are neither destroyed nor failed. */
  const live = (orgId: string) =>
    h.db
      .collection('deployments')
      .countDocuments({ orgId, destroyedAt: { $exists: false }, status: { $ne: 'failed' } });
  /** A queued record whose workflow never started: what an api leaves when it dies between its insert and the start. */
  const orphan = async (org: { orgId: string; userId: string }) => {
    const now = new Date();
    const record: DeploymentRecord = {
      _id: randomUUID(),
      orgId: org.orgId,
      createdBy: org.userId,
      origin: 'compat',
      name: 'orphan',
      provider: 'engine_local',
      source: { type: 'image', image: 'slipway-test/quota:1' },
      port: 8080,
      envVars: {},
      revision: 1,
      status: 'queued',
      version: 1,
      events: [{ status: 'queued', message: 'deployment accepted', at: now }],
      createdAt: now,
      updatedAt: now,
    };
    await store.insert(record);
    return record._id;
  };
  return { store, deploys, live, orphan };
}

describe('plan quotas under concurrency (Redis slots checked against MongoDB)', () => {
  let h: Harness;
  let t: ReturnType<typeof helpers>;

  beforeAll(async () => {
    h = await startHarness('quotas', unlimited, { worker: false });
    t = helpers(h);
  });
  afterAll(() => h?.stop());

  it('admits exactly 3 of 30 concurrent deploys in a free org, and exactly one more after a destroy', async () => {
    const org = await h.newOrg('free');
    const accepted = await t.deploys(org.token, 30);
    expect(accepted).toHaveLength(3);
    expect(await t.live(org.orgId)).toBe(3);

    expect((await client(h, org.token).del(`/compat/deployments/${accepted[0]}`)).status).toBe(204);
    expect(await t.deploys(org.token, 30)).toHaveLength(1);
    expect(await t.live(org.orgId)).toBe(3);
  });

  it('admits exactly 3 of 200 concurrent deploys in a free org', async () => {
    const org = await h.newOrg('free');
    expect(await t.deploys(org.token, 200)).toHaveLength(3);
    expect(await t.live(org.orgId)).toBe(3);
  });

  it('gives a failed deployment’s slot back without the worker knowing of slots', async () => {
    const org = await h.newOrg('free');
    const [first] = await t.deploys(org.token, 3);
    // As the worker records a failure: the record's status, nothing else.
    await t.store.recordStatus({ deploymentId: first!, version: 2, status: 'failed', message: 'image not found' });
    expect(await t.deploys(org.token, 30)).toHaveLength(1);
  });

  it('counts a slot taken for a deploy whose record is not written yet, while its lease runs', async () => {
    const org = await h.newOrg('free');
    const quota = createQuota({
      redis: h.redis,
      keyPrefix: h.config.REDIS_KEY_PREFIX,
      records: quotaRecords(h.db, h.temporal),
      leaseS: 3600,
      resyncS: 300,
    });
    for (let i = 0; i < 3; i++) expect((await quota.acquire(org.orgId, randomUUID(), 3)).admitted).toBe(true);
    expect(await t.deploys(org.token, 30)).toHaveLength(0);
  });

  it('does not count queued records whose workflow never started', async () => {
    const org = await h.newOrg('free');
    for (let i = 0; i < 3; i++) await t.orphan(org);
    // The org's slots are read from MongoDB on first use: the three records are there, their workflows are not.
    expect(await t.deploys(org.token, 30)).toHaveLength(3);
  });

  it('converges on MongoDB after Redis lost the organisation’s slots', async () => {
    const org = await h.newOrg('free');
    const accepted = await t.deploys(org.token, 3);
    expect(accepted).toHaveLength(3);
    const lost = await h.redis.keys(`${h.config.REDIS_KEY_PREFIX}quota:{${org.orgId}}*`);
    expect(lost.length).toBeGreaterThan(0);
    await h.redis.del(...lost);

    expect(await t.deploys(org.token, 30)).toHaveLength(0);
    expect((await client(h, org.token).del(`/compat/deployments/${accepted[1]}`)).status).toBe(204);
    expect(await t.deploys(org.token, 30)).toHaveLength(1);
    expect(await t.live(org.orgId)).toBe(3);
  });
});

describe('plan quotas: a slot is a lease until the workflow start is confirmed', () => {
  let h: Harness;
  let t: ReturnType<typeof helpers>;

  beforeAll(async () => {
    h = await startHarness('quotas-lease', { ...unlimited, QUOTA_LEASE_S: '1' }, { worker: false });
    t = helpers(h);
  });
  afterAll(() => h?.stop());

  it('stops counting a deploy whose api died after its insert, once its lease ran out', async () => {
    const org = await h.newOrg('free');
    const quota = createQuota({
      redis: h.redis,
      keyPrefix: h.config.REDIS_KEY_PREFIX,
      records: quotaRecords(h.db, h.temporal),
      leaseS: h.config.QUOTA_LEASE_S,
      resyncS: h.config.QUOTA_RESYNC_S,
    });
    // Each "api" took its slot and wrote its record, then died before starting the workflow.
    for (let i = 0; i < 3; i++) expect((await quota.acquire(org.orgId, await t.orphan(org), 3)).admitted).toBe(true);

    // Each deploy waits for one dead slot's lease to run out; a confirmed slot outlives its own lease.
    for (const name of ['a', 'b', 'c']) {
      await eventually(async () => {
        const r = await client(h, org.token).post<Body>('/compat/deploy', { image: 'slipway-test/quota:1', name });
        if (r.status === 429) return undefined;
        expect(r.status).toBe(202);
        return r.body.deploymentId;
      }, `deploy ${name} to be admitted once a dead slot's lease ran out`);
    }
    const over = await client(h, org.token).post<Body>('/compat/deploy', { image: 'slipway-test/quota:1', name: 'd' });
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'QUOTA_EXCEEDED', details: { limit: 3, live: 3 } });
  });
});
