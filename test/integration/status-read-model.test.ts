import type { CommandStartedEvent } from 'mongodb';

import { createDeploymentReads } from '@api/features/deployments/service.reads';
import { createLogStore } from '@shared/deployments/logs-store';
import { createStatusModel } from '@shared/deployments/read-model';
import { releaseId } from '@shared/deployments/releases-store';
import { announcingStatus, createStatusFeed } from '@shared/deployments/status-feed';
import { createDeploymentStore, type DeploymentStore } from '@shared/deployments/store';
import { createLogger } from '@shared/logger';
import { createRedis } from '@shared/redis';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { startSecondApi } from '../helpers/second-api';

type Body = Record<string, unknown> & { status?: string; deploymentId?: string };

const ORDER = ['queued', 'building', 'deploying', 'running'];

/**
 * Status reads answer from the read model the worker keeps in Redis, never older than what the worker announced,
 * never another organisation's, never a destroyed deployment, and from MongoDB when the model has nothing. No worker
 * runs here: the test writes each status change exactly as the worker does (announcingStatus over the store).
 */
describe('Status read model: status reads from Redis, as fresh as the last announcement', () => {
  let h: Harness;
  /** A second api over the same services whose MongoDB commands are counted. */
  let counted: string;
  let second: Awaited<ReturnType<typeof startSecondApi>>;
  const commands: CommandStartedEvent[] = [];
  let store: DeploymentStore;
  let worker: DeploymentStore;
  let model: ReturnType<typeof createStatusModel>;

  beforeAll(async () => {
    h = await startHarness('status-read-model', { RATE_LIMIT_COMPAT_READS_PER_MIN: '10000' }, { worker: false });
    second = await startSecondApi(h, { onCommand: (e) => commands.push(e) });
    counted = second.baseUrl;
    store = createDeploymentStore(h.db);
    model = createStatusModel({ redis: h.redis, keyPrefix: h.config.REDIS_KEY_PREFIX, store });
    // The worker's store: each status change written, put in the model, then announced.
    worker = announcingStatus(store, createStatusFeed({ redis: h.redis, keyPrefix: h.config.REDIS_KEY_PREFIX }), model);
  });
  afterAll(async () => {
    await second?.stop();
    await h?.stop();
  });

  const entryKey = (id: string) => `${h.config.REDIS_KEY_PREFIX}deployment-read:${id}`;

  async function deployment(token: string, name = 'app') {
    const api = client(h, token);
    const r = await api.post<Body>('/compat/deploy', { image: 'busybox:latest', name, port: 8080 });
    expect(r.status).toBe(202);
    return String(r.body.deploymentId);
  }

  it('answers a read made on each announcement with that status or a newer one', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const id = await deployment(org.token);
    // Filled while queued: from here on the api reads the model, and only the worker's writes move it.
    expect((await api.get<Body>(`/compat/deployments/${id}`)).body.status).toBe('queued');

    const listener = h.redis.duplicate();
    const seen: Promise<{ announced: number; read: string | undefined }>[] = [];
    let announced = 0;
    listener.on('message', () => {
      const n = ++announced;
      seen.push(api.get<Body>(`/compat/deployments/${id}`).then((r) => ({ announced: n, read: r.body.status })));
    });
    await listener.subscribe(`${h.config.REDIS_KEY_PREFIX}deployment-status:${id}`);
    try {
      for (const [i, status] of (['building', 'deploying', 'running'] as const).entries())
        await worker.recordStatus({ deploymentId: id, version: 10 + i, status, message: status });
      while (seen.length < 3) await new Promise((r) => setTimeout(r, 20));
      const reads = await Promise.all(seen);
      // The n-th announcement is ORDER[n]; the read it caused shows it or a later one.
      for (const r of reads) expect(ORDER.indexOf(r.read ?? '')).toBeGreaterThanOrEqual(r.announced);
    } finally {
      listener.disconnect();
    }
    const platform = await api.get<{ data: Record<string, unknown> }>(`/platform/deployments/${id}`);
    expect(platform.body.data).toMatchObject({ status: 'running', name: 'app', origin: 'compat', projectId: null });
  });

  it('keeps the newer version when an older snapshot arrives after it', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const id = await deployment(org.token);
    // A reader's fill that read MongoDB before the worker's write and lands after the worker's refresh.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let read!: () => void;
    const hasRead = new Promise<void>((r) => (read = r));
    const slow = createStatusModel({
      redis: h.redis,
      keyPrefix: h.config.REDIS_KEY_PREFIX,
      store: {
        releases: store.releases,
        findAny: async (d) => {
          const found = await store.findAny(d);
          read();
          await held;
          return found;
        },
      },
    });
    const filling = slow.fill(id);
    await hasRead;
    await worker.recordStatus({ deploymentId: id, version: 10, status: 'running', message: 'serving' });
    release();
    expect((await filling)?.record.status).toBe('queued');
    expect((await api.get<Body>(`/compat/deployments/${id}`)).body.status).toBe('running');
    expect(await h.redis.hget(entryKey(id), 'v')).toBe('10');
  });

  it('keeps a release change that keeps the version over an older read of the same version', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const id = await deployment(org.token);
    await worker.recordStatus({ deploymentId: id, version: 10, status: 'deploying', message: 'starting' });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let read!: () => void;
    const hasRead = new Promise<void>((r) => (read = r));
    const slow = createStatusModel({
      redis: h.redis,
      keyPrefix: h.config.REDIS_KEY_PREFIX,
      store: {
        findAny: (d) => store.findAny(d),
        releases: {
          list: async (d, q) => {
            const found = await store.releases.list(d, q);
            read();
            await held;
            return found;
          },
        },
      },
    });
    const filling = slow.fill(id);
    await hasRead;
    // As the worker does: a release written, then the model refreshed (the version stays 10).
    await store.releases.insert({
      _id: releaseId(id, 1),
      deploymentId: id,
      orgId: org.orgId,
      revision: 1,
      image: 'busybox:latest',
      imageId: 'sha256:0',
      port: 8080,
      configHash: 'hmac-sha256:0',
      envNames: [],
      trigger: 'deploy',
      createdAt: new Date(),
      status: 'starting',
    });
    await model.refresh(id);
    release();
    expect((await filling)?.releases.total).toBe(0);
    const r = await api.get<{ releases: { total: number } }>(`/compat/deployments/${id}`);
    expect(r.body.releases.total).toBe(1);
  });

  it("answers 404 for another organisation's deployment, on both origins, with its entry filled", async () => {
    const owner = await h.newOrg();
    const other = await h.newOrg();
    const id = await deployment(owner.token);
    expect((await client(h, owner.token).get(`/compat/deployments/${id}`)).status).toBe(200);
    expect(await h.redis.hget(entryKey(id), 'doc')).toBeTruthy();
    const stranger = client(h, other.token);
    expect((await stranger.get(`/compat/deployments/${id}`)).status).toBe(404);
    expect((await stranger.get(`/platform/deployments/${id}`)).status).toBe(404);
  });

  it('answers 404 at once after a destroy, and a late status write does not bring it back', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const id = await deployment(org.token);
    expect((await api.get(`/platform/deployments/${id}`)).status).toBe(200);
    expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    expect((await api.get(`/compat/deployments/${id}`)).status).toBe(404);
    expect((await api.get(`/platform/deployments/${id}`)).status).toBe(404);
    // The workflow's own writes after the destroy (its teardown) find the record hidden.
    await worker.recordStatus({ deploymentId: id, version: 10, status: 'stopped', message: 'destroyed' });
    expect((await api.get(`/compat/deployments/${id}`)).status).toBe(404);
    expect(await h.redis.hget(entryKey(id), 'gone')).toBe('1');
  });

  it('reads MongoDB when the entry is missing, and fills it', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const id = await deployment(org.token);
    await worker.recordStatus({ deploymentId: id, version: 10, status: 'building', message: 'building' });
    await h.redis.del(entryKey(id));
    expect((await api.get<Body>(`/compat/deployments/${id}`)).body.status).toBe('building');
    expect(await h.redis.hget(entryKey(id), 'v')).toBe('10');
  });

  it('lets an entry a reader filled lapse within half a minute unless a writer keeps it', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const id = await deployment(org.token);
    // A worker that does not keep the model (an older one, another key prefix) writes MongoDB only.
    await store.recordStatus({ deploymentId: id, version: 10, status: 'building', message: 'building' });
    await h.redis.del(entryKey(id));
    expect((await api.get<Body>(`/compat/deployments/${id}`)).body.status).toBe('building');
    const filled = await h.redis.ttl(entryKey(id));
    expect(filled).toBeGreaterThan(0);
    expect(filled).toBeLessThanOrEqual(30);
    // One that keeps it holds the entry for its writes' sake: a day.
    await worker.recordStatus({ deploymentId: id, version: 11, status: 'deploying', message: 'starting' });
    expect(await h.redis.ttl(entryKey(id))).toBeGreaterThan(3600);
  });

  it('answers from MongoDB when Redis is down', async () => {
    const org = await h.newOrg();
    const id = await deployment(org.token);
    await worker.recordStatus({ deploymentId: id, version: 10, status: 'running', message: 'serving' });
    // A Redis that is not there: the model's reads and fills must not stand between the caller and MongoDB.
    const down = createRedis('redis://127.0.0.1:1');
    down.on('error', () => undefined);
    try {
      const reads = createDeploymentReads({
        store,
        model: createStatusModel({ redis: down, keyPrefix: h.config.REDIS_KEY_PREFIX, store }),
        logs: createLogStore(h.db),
        authz: { visibility: () => Promise.resolve({ all: true, projectIds: [] }) },
        docker: h.docker,
        log: createLogger('test', 'error'),
      });
      const principal = await h.identity.authenticate(org.token);
      expect((await reads.status(principal, id)).record.status).toBe('running');
      const other = await h.identity.authenticate((await h.newOrg()).token);
      await expect(reads.status(other, id)).rejects.toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND' });
    } finally {
      down.disconnect();
    }
  });

  it('reads nothing of the deployment from MongoDB on a status read the model holds', async () => {
    const org = await h.newOrg();
    const id = await deployment(org.token);
    await worker.recordStatus({ deploymentId: id, version: 10, status: 'running', message: 'serving' });
    const headers = { authorization: `Bearer ${org.token}` };
    commands.length = 0;
    for (const origin of ['compat', 'platform', 'compat', 'platform'])
      expect((await fetch(`${counted}/${origin}/deployments/${id}`, { headers })).status).toBe(200);
    const ofDeployments = commands.filter((e) => {
      const c = e.command as Record<string, unknown>;
      return ['deployments', 'deployment_releases'].includes(String(c[e.commandName]));
    });
    expect(
      ofDeployments.map((e) => `${e.commandName} ${String((e.command as Record<string, unknown>)[e.commandName])}`),
    ).toEqual([]);
  });
});
