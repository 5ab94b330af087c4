import { randomUUID } from 'node:crypto';

import { LABELS } from '@shared/constants';
import { createLogStore } from '@shared/deployments/logs-store';
import type { MetricsSample } from '@shared/deployments/metrics-store';
import { ensureMetricsSchedules } from '@worker/schedules';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { archiveForm, makeZip } from '../helpers/zip';

type Body = Record<string, unknown>;
interface Deployment {
  id: string;
  status: string;
  origin: string;
  projectId: string | null;
  url: string | null;
  replicas?: number;
  instances?: { name: string; replica: number; url: string }[];
  releases?: { total: number; recent: { revision: number; trigger: string; status: string }[] };
  lastFailure?: Body;
  envVarNames: string[];
}
interface Line {
  timestamp: string;
  stream: string;
  message: string;
  instance?: string;
}

/**
 * The platform API's deployments over HTTP on the real stack (Temporal, FerretDB, MinIO, Redis, Docker, Caddy):
 * reads across both origins, creation from an image and from source, logs, health and metrics against what the
 * engine itself says, the recorded history, destroy, commands, and other organisations kept out.
 */
describe('platform deployment routes', () => {
  let h: Harness;
  let image: string;
  let api: ReturnType<typeof client>;
  let other: ReturnType<typeof client>;
  const schedules: { delete(): Promise<void> }[] = [];

  beforeAll(async () => {
    h = await startHarness('platform-deployments', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
      METRICS_SAMPLE_S: '1',
      DEPLOY_READY_TIMEOUT_S: '30',
    });
    image = await buildFixtureImage(h.docker, 'hello');
    api = client(h, (await h.newOrg('pro')).token);
    other = client(h, (await h.newOrg('pro')).token);
  });
  afterAll(async () => {
    for (const s of schedules) await s.delete().catch(() => undefined);
    await h?.stop();
  });

  const get = async (id: string) => (await api.get<{ data: Deployment }>(`/platform/deployments/${id}`)).body.data;
  const waitStatus = (id: string, status: string, timeoutMs = 90_000) =>
    eventually(
      async () => {
        const d = await get(id);
        if (d.status === 'failed') throw new Error(`deployment ${id} failed: ${JSON.stringify(d)}`);
        return d.status === status ? d : undefined;
      },
      `deployment ${id} to be ${status}`,
      timeoutMs,
    );
  const containers = (id: string) =>
    h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } });

  // Shared by the tests below, in order: one compat deployment, one platform image deployment of 2 replicas, one
  // platform source deployment in a project.
  let compatId: string;
  let imageId: string;
  let sourceId: string;
  let projectId: string;

  it('creates from an image and from source, refusing a body with no source or two', async () => {
    const name = `p-${randomUUID().slice(0, 6)}`;
    compatId = (await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: `${name}-c`, port: 8080 }))
      .body.deploymentId;

    const created = await api.post<{ data: { deployment: Deployment; statusUrl: string } }>('/platform/deployments', {
      image,
      name,
      port: 8080,
      replicas: 2,
      envVars: { GREETING: 'hi' },
    });
    expect(created.status).toBe(202);
    imageId = created.body.data.deployment.id;
    expect(created.body.data).toMatchObject({
      deployment: { status: 'queued', origin: 'platform', envVarNames: ['GREETING'], projectId: null },
      statusUrl: `/platform/deployments/${imageId}`,
    });

    projectId = (await api.post<{ data: { id: string } }>('/platform/projects', { name: `proj-${name}` })).body.data.id;
    const upload = await api.call<{ uploadId: string }>(
      'POST',
      '/compat/uploads/zip',
      archiveForm(await makeZip({ 'index.html': '<h1>from source</h1>' })),
    );
    const source = await api.post<{ data: { deployment: Deployment } }>('/platform/deployments', {
      uploadId: upload.body.uploadId,
      name: `${name}-s`,
      projectId,
    });
    expect(source.status).toBe(202);
    sourceId = source.body.data.deployment.id;
    expect(source.body.data.deployment).toMatchObject({ origin: 'platform', projectId, source: { type: 'upload' } });

    for (const [body, said] of [
      [{ name: 'x' }, /exactly one source: image, uploadId or repoUrl \(got none\)/],
      [{ name: 'x', image, uploadId: upload.body.uploadId }, /exactly one source.*got image and uploadId/],
      [{ name: 'x', image, branch: 'main' }, /branch applies to uploadId or repoUrl/],
      [{ name: 'x', image, replicas: 6 }, /from 1 to 5 on the pro plan/],
      [{ name: 'x', image, replicas: 0 }, /replicas/],
    ] as const) {
      const r = await api.post<{ status: string; message: string }>('/platform/deployments', body);
      expect([body, r.status, r.body.status]).toEqual([body, 400, 'error']);
      expect(r.body.message).toMatch(said);
    }

    await waitStatus(imageId, 'running');
    await waitStatus(sourceId, 'running', 180_000);
    await waitStatus(compatId, 'running');
  });

  it('lists both origins with status, provider and project filters and pages; compat lists only its own', async () => {
    type List = { data: { deployments: Deployment[]; total: number; limit: number; offset: number } };
    const ids = async (query: string) =>
      (await api.get<List>(`/platform/deployments${query}`)).body.data.deployments.map((d) => d.id).sort();

    expect(await ids('')).toEqual([compatId, imageId, sourceId].sort());
    expect(await ids('?status=running&provider=engine_local')).toEqual([compatId, imageId, sourceId].sort());
    expect(await ids('?status=stopped')).toEqual([]);
    expect(await ids('?provider=cloud_a_run')).toEqual([]);
    expect(await ids(`?projectId=${projectId}`)).toEqual([sourceId]);
    const page = (await api.get<List>('/platform/deployments?limit=1&offset=1')).body.data;
    expect(page).toMatchObject({ total: 3, limit: 1, offset: 1 });
    expect(page.deployments).toHaveLength(1);
    expect((await api.get('/platform/deployments?status=sleeping')).status).toBe(400);

    const compat = await api.get<{ deployments: { id: string }[] }>('/compat/deployments');
    expect(compat.body.deployments.map((d) => d.id)).toEqual([compatId]);
    expect((await other.get<List>('/platform/deployments')).body.data.deployments).toEqual([]);
  });

  it('shows status, stable URL, instances, releases and no lastFailure; compat shows the same', async () => {
    const d = await get(imageId);
    expect(d).toMatchObject({ status: 'running', replicas: 2, releases: { total: 1 } });
    expect(d.url).toMatch(/^http:\/\/p-[a-z0-9]+-[0-9a-f]{12}\.localhost:\d+$/);
    expect(d.instances!.map((i) => i.replica).sort()).toEqual([0, 1]);
    for (const i of d.instances!) expect(i.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(d.releases!.recent[0]).toMatchObject({ revision: 1, trigger: 'deploy', status: 'active' });
    expect(d.lastFailure).toBeUndefined();
    expect((await containers(imageId)).filter((c) => c.State === 'running')).toHaveLength(2);

    const compat = (await api.get<Deployment>(`/compat/deployments/${imageId}`)).body;
    expect(compat).toMatchObject({ status: d.status, url: d.url, releases: d.releases, instances: d.instances });
  });

  it('serves logs by stream, instance, since and limit', async () => {
    type Logs = { data: { lines: Line[] } };
    const logs = async (id: string, q: string) =>
      (await api.get<Logs>(`/platform/deployments/${id}/logs${q}`)).body.data.lines;

    // A notice as the worker writes one (activities' appendLog), beside the build's own lines.
    await createLogStore(h.db).append(sourceId, 'system', ['a notice from the platform']);
    const build = await logs(sourceId, '?stream=build&limit=1000');
    expect(build.length).toBeGreaterThan(0);
    expect(new Set(build.map((l) => l.stream))).toEqual(new Set(['build']));
    const system = await logs(sourceId, '?stream=system&limit=1000');
    expect(system.map((l) => [l.stream, l.message])).toEqual([['system', 'a notice from the platform']]);
    const both = await logs(sourceId, '?limit=1000');
    expect(both.filter((l) => l.stream !== 'stdout' && l.stream !== 'stderr')).toHaveLength(build.length + 1);

    // busybox httpd -v writes a line per request to stderr: one request to each instance.
    const { instances } = await get(imageId);
    for (const i of instances!) expect((await fetch(`${i.url}/`)).status).toBe(200);
    const app = await eventually(async () => {
      const lines = await logs(imageId, '?stream=app&limit=1000');
      return new Set(lines.map((l) => l.instance)).size === 2 ? lines : undefined;
    }, 'app lines from both instances');
    expect(new Set(app.map((l) => l.stream))).toEqual(new Set(['stderr']));
    const one = instances!.find((i) => i.replica === 1)!.name;
    const only = await logs(imageId, `?instance=${one}&limit=1000`);
    expect(only.length).toBeGreaterThan(0);
    expect(new Set(only.map((l) => l.instance))).toEqual(new Set([one]));
    expect(await logs(imageId, '?limit=1')).toHaveLength(1);
    const all = await logs(imageId, '?limit=1000');
    expect(new Set(all.map((l) => l.stream))).toEqual(new Set(['stderr']));
    expect(all.map((l) => l.timestamp)).toEqual([...all.map((l) => l.timestamp)].sort());

    const future = Math.floor(Date.now() / 1000) + 3600;
    expect(await logs(imageId, `?since=${future}`)).toEqual([]);
    const cut = app.at(-1)!.timestamp;
    const since = await logs(imageId, `?stream=app&since=${encodeURIComponent(cut.slice(0, 19) + 'Z')}`);
    expect(since.length).toBeGreaterThan(0);
    for (const l of since) expect(Date.parse(l.timestamp)).toBeGreaterThanOrEqual(Date.parse(cut.slice(0, 19) + 'Z'));

    const unknown = await api.get<{ message: string }>(
      `/platform/deployments/${imageId}/logs?instance=slipway-${randomUUID()}-r1`,
    );
    expect(unknown.status).toBe(400);
    expect(unknown.body.message).toMatch(/not an instance of this deployment/);
    expect((await api.get(`/platform/deployments/${imageId}/logs?stream=stdout`)).status).toBe(400);
    expect((await api.get(`/platform/deployments/${imageId}/logs?since=yesterday`)).status).toBe(400);
  });

  it('reports health as the engine sees it, and degraded when an instance is stopped behind its back', async () => {
    type Health = {
      data: {
        status: string;
        overall: string;
        instances: {
          name: string;
          state: string;
          restarts: number;
          probe: { ok: boolean; status?: number; latencyMs?: number };
        }[];
      };
    };
    const health = async () => (await api.get<Health>(`/platform/deployments/${imageId}/health`)).body.data;
    const now = await health();
    expect(now).toMatchObject({ status: 'running', overall: 'healthy' });
    expect(now.instances).toHaveLength(2);
    for (const i of now.instances) {
      const info = await h.docker.getContainer(i.name).inspect();
      expect(i).toMatchObject({ state: info.State.Status, restarts: info.RestartCount });
      expect(i.probe).toMatchObject({ ok: true, status: 200, latencyMs: expect.any(Number) });
    }

    const victim = now.instances[1]!.name;
    await h.docker.getContainer(victim).stop({ t: 1 });
    try {
      const degraded = await health();
      expect(degraded.overall).toBe('degraded');
      expect(degraded.instances.find((i) => i.name === victim)).toMatchObject({
        state: 'exited',
        probe: { ok: false, error: 'not running' },
      });
    } finally {
      await h.docker.getContainer(victim).start();
    }
    await eventually(async () => ((await health()).overall === 'healthy' ? true : undefined), 'healthy again');
  });

  it('reads metrics as docker stats computes them, per running instance', async () => {
    type Metrics = {
      data: {
        instances: {
          name: string;
          memoryLimitBytes: number;
          memoryBytes: number;
          pids: number;
          networkRxBytes: number;
          cpuPercent: number;
        }[];
      };
    };
    const { instances } = await get(imageId);
    const engine = async (name: string) =>
      (await h.docker.getContainer(name).stats({ stream: false })) as unknown as {
        memory_stats: { limit: number };
        pids_stats: { current: number };
        networks: Record<string, { rx_bytes: number }>;
      };
    const rx = (s: Awaited<ReturnType<typeof engine>>) => Object.values(s.networks).reduce((n, x) => n + x.rx_bytes, 0);
    const before = await Promise.all(instances!.map((i) => engine(i.name)));
    const r = await api.get<Metrics>(`/platform/deployments/${imageId}/container-metrics`);
    const after = await Promise.all(instances!.map((i) => engine(i.name)));
    expect(r.status).toBe(200);
    expect(r.body.data.instances.map((m) => m.name).sort()).toEqual(instances!.map((i) => i.name).sort());
    for (const [n, i] of instances!.entries()) {
      const m = r.body.data.instances.find((x) => x.name === i.name)!;
      const info = await h.docker.getContainer(i.name).inspect();
      expect(m.memoryLimitBytes).toBe(info.HostConfig.Memory);
      expect(m.memoryLimitBytes).toBe(after[n]!.memory_stats.limit);
      expect(m.pids).toBe(after[n]!.pids_stats.current);
      // Counters only grow: ours lies between two reads of the engine's own.
      expect(m.networkRxBytes).toBeGreaterThanOrEqual(rx(before[n]!));
      expect(m.networkRxBytes).toBeLessThanOrEqual(rx(after[n]!));
      expect(m.memoryBytes).toBeGreaterThan(0);
      expect(m.cpuPercent).toBeGreaterThanOrEqual(0);
    }
  });

  it('records metrics history on a schedule, averages it by step, and sweeps samples past the retention', async () => {
    const started = new Date(Date.now() - 1000).toISOString();
    const handles = await ensureMetricsSchedules(h.temporal, {
      taskQueue: h.taskQueue,
      sampleEveryS: h.config.METRICS_SAMPLE_S,
      sweepEveryS: 3600,
    });
    schedules.push(handles.sample, handles.sweep);
    type History = {
      data: {
        step: number;
        series: {
          instance: string;
          points: { at: string; samples: number; memoryLimitBytes: number; pids: number }[];
        }[];
      };
    };
    const history = async (q: string) =>
      api.get<History>(`/platform/deployments/${imageId}/container-metrics/history${q}`);
    const series = await eventually(
      async () => {
        const s = (await history(`?from=${encodeURIComponent(started)}&step=1`)).body.data.series;
        return s.length === 2 && s.every((x) => x.points.length >= 2) ? s : undefined;
      },
      'two samples of each instance',
      60_000,
    );
    const { instances } = await get(imageId);
    expect(series.map((s) => s.instance).sort()).toEqual(instances!.map((i) => i.name).sort());
    for (const s of series) {
      const info = await h.docker.getContainer(s.instance).inspect();
      for (const p of s.points) expect(p.memoryLimitBytes).toBe(info.HostConfig.Memory);
    }
    // One bucket for the whole window: every sample of an instance averaged into one point.
    const whole = (await history(`?from=${encodeURIComponent(started)}&step=3600`)).body.data.series;
    for (const s of whole) expect(s.points).toHaveLength(1);
    expect(whole[0]!.points[0]!.samples).toBeGreaterThanOrEqual(2);

    expect((await history('?step=1&from=2026-01-01T00:00:00Z')).status).toBe(400);
    expect(
      (await history(`?from=${encodeURIComponent(new Date().toISOString())}&to=2020-01-01T00:00:00Z`)).status,
    ).toBe(400);
    expect((await other.get(`/platform/deployments/${imageId}/container-metrics/history`)).status).toBe(404);

    // No TTL index on the embedded store: the sweep schedule deletes what is older than METRICS_RETENTION_H.
    const col = h.db.collection<MetricsSample>('deployment_metrics');
    const old = new Date(Date.now() - (h.config.METRICS_RETENTION_H + 1) * 3600 * 1000);
    await col.insertOne({ ...(await col.findOne({ deploymentId: imageId }, { projection: { _id: 0 } }))!, at: old });
    expect(await col.countDocuments({ deploymentId: imageId, at: { $lte: old } })).toBe(1);
    await handles.sweep.trigger();
    await eventually(
      async () => ((await col.countDocuments({ deploymentId: imageId, at: { $lte: old } })) === 0 ? true : undefined),
      'the old sample to be swept',
    );
    expect(await col.countDocuments({ deploymentId: imageId })).toBeGreaterThan(0);
  });

  it('stops, starts, scales, redeploys and rolls back through the routes; an impossible command is 400', async () => {
    type Accepted = { data: { deployment: Deployment; statusUrl: string; command: { id: string; url: string } } };
    const follow = async (r: { status: number; body: Accepted }) => {
      expect([r.status, r.body]).toEqual([202, expect.objectContaining({ data: expect.any(Object) })]);
      const url = r.body.data.command.url;
      expect(url).toMatch(new RegExp(`^/platform/deployments/${imageId}/commands/`));
      return eventually(async () => {
        const c = (await api.get<{ data: { state: string; message?: string } }>(url)).body.data;
        if (c.state === 'failed') throw new Error(`command failed: ${c.message}`);
        return c.state === 'succeeded' ? c : undefined;
      }, `command ${url}`);
    };
    const refused = await api.post<{ message: string }>(`/platform/deployments/${imageId}/start`);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/running.*stop, redeploy, scale, rollback, destroy/);

    await follow(await api.post<Accepted>(`/platform/deployments/${imageId}/stop`));
    expect((await get(imageId)).status).toBe('stopped');
    expect(
      (await api.get<{ data: { overall: string } }>(`/platform/deployments/${imageId}/health`)).body.data.overall,
    ).toBe('stopped');
    expect(
      (await api.get<{ data: { instances: unknown[] } }>(`/platform/deployments/${imageId}/container-metrics`)).body
        .data.instances,
    ).toEqual([]);
    await follow(await api.post<Accepted>(`/platform/deployments/${imageId}/start`));
    await follow(await api.post<Accepted>(`/platform/deployments/${imageId}/scale`, { replicas: 1 }));
    expect((await get(imageId)).instances).toHaveLength(1);

    expect((await api.post(`/platform/deployments/${imageId}/redeploy`, {})).status).toBe(400);
    await follow(
      await api.post<Accepted>(`/platform/deployments/${imageId}/redeploy`, { envVars: { COLOUR: 'blue' } }),
    );
    const redeployed = await get(imageId);
    expect(redeployed).toMatchObject({ status: 'running', envVarNames: ['COLOUR'], releases: { total: 2 } });
    await follow(await api.post<Accepted>(`/platform/deployments/${imageId}/rollback`, { revision: 1 }));
    const releases = (
      await api.get<{
        data: { releases: { revision: number; trigger: string; rollbackOf?: number }[]; total: number };
      }>(`/platform/deployments/${imageId}/releases`)
    ).body.data;
    expect(releases.total).toBe(3);
    expect(releases.releases[0]).toMatchObject({ revision: 3, trigger: 'rollback', rollbackOf: 1 });
    expect((await get(imageId)).envVarNames).toEqual(['GREETING']);
    expect((await api.post(`/platform/deployments/${imageId}/scale`, { replicas: 6 })).status).toBe(400);
  });

  it('answers 404 for every route of another organisation’s deployment', async () => {
    for (const [method, path, body] of [
      ['GET', `/platform/deployments/${imageId}`],
      ['DELETE', `/platform/deployments/${imageId}`],
      ['GET', `/platform/deployments/${imageId}/logs`],
      ['GET', `/platform/deployments/${imageId}/releases`],
      ['GET', `/platform/deployments/${imageId}/health`],
      ['GET', `/platform/deployments/${imageId}/container-metrics`],
      ['POST', `/platform/deployments/${imageId}/stop`],
      ['POST', `/platform/deployments/${imageId}/redeploy`, { envVars: {} }],
      ['POST', `/platform/deployments/${imageId}/scale`, { replicas: 1 }],
      ['POST', `/platform/deployments/${imageId}/rollback`, {}],
      ['GET', `/platform/deployments/${imageId}/commands/stop:x`],
    ] as const) {
      const r = await other.call<{ message: string }>(method, path, body);
      expect([method, path, r.status]).toEqual([method, path, 404]);
      expect(r.body.message).not.toContain('slipway-');
    }
    expect((await get(imageId)).status).toBe('running');
  });

  it('destroys through either API the same way: 204, gone from both, containers removed, intent recorded', async () => {
    expect((await api.del(`/platform/deployments/${imageId}`)).status).toBe(204);
    expect((await api.del(`/compat/deployments/${sourceId}`)).status).toBe(204);
    expect((await api.del(`/platform/deployments/${compatId}`)).status).toBe(204);
    for (const id of [imageId, sourceId, compatId]) {
      expect((await api.get(`/platform/deployments/${id}`)).status).toBe(404);
      expect((await api.get(`/compat/deployments/${id}`)).status).toBe(404);
      expect((await api.del(`/platform/deployments/${id}`)).status).toBe(404);
      await eventually(async () => ((await containers(id)).length === 0 ? true : undefined), `${id}'s containers gone`);
    }
    const intents = await h.db
      .collection('deployment_destroys')
      .find({ _id: { $in: [imageId, sourceId, compatId] } } as never)
      .toArray();
    expect(intents).toHaveLength(3);
    expect((await api.get<{ data: { total: number } }>('/platform/deployments')).body.data.total).toBe(0);
  });
});
