import { randomUUID } from 'node:crypto';

import { PutObjectCommand } from '@aws-sdk/client-s3';

import { createBucketStore } from '@shared/buckets/store';
import { USAGE_ROLLUP_WORKFLOW } from '@shared/contracts/usage';
import { createMetricsStore, type MetricsSample } from '@shared/deployments/metrics-store';
import { createDeploymentStore } from '@shared/deployments/store';
import type { DeploymentEvent, DeploymentRecord } from '@shared/deployments/types';
import { createAiUsage } from '@shared/usage/ai-usage';
import { createBucketUsage } from '@shared/usage/bucket-usage';
import { createEdgeReadings, type EdgeReading } from '@shared/usage/edge-counters';
import { backupFact, createStorageLedger, volumeFact } from '@shared/usage/storage-ledger';
import { ensureMetricsSchedules } from '@worker/schedules';

import { openai, startOpenAiDouble } from '../helpers/ai-doubles';
import { client } from '../helpers/client';
import { edgeAgent, edgeGet } from '../helpers/edge';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { connectAgent } from '../helpers/mcp';

const HOUR = 3_600_000;
const GIB = 1024 ** 3;
const METRICS = [
  'cpuSeconds',
  'memoryGbHours',
  'buildMinutes',
  'requests',
  'requestBytes',
  'responseBytes',
  'aiInputTokens',
  'aiOutputTokens',
  'volumeGbHours',
  'databaseGbHours',
  'backupGbHours',
  'bucketGbHours',
] as const;
type Metric = (typeof METRICS)[number];
type Figures = Record<Metric, { value: number; unit: string; limit: number | null }>;
interface UsageBody {
  data: {
    from: string;
    to: string;
    groupBy: string;
    plan: string;
    total: Figures;
    groups: { key: string | null; usage: Figures }[];
    hours: { rolledUp: number; live: number };
  };
}

/**
 * What the test expects, from the raw records it wrote, computed here on its own: a point (a sample, a delta, a turn's
 * tokens) counts where it falls; an interval (a build, storage held) for the time it overlaps each window.
 */
interface Fact {
  metric: Metric;
  projectId: string | null;
  deploymentId: string | null;
  at?: number;
  value?: number;
  from?: number;
  to?: number;
  /** Per hour held, in the figure's unit. */
  perHour?: number;
}
const overlapH = (f: Fact, a: number, b: number) => Math.max(0, Math.min(f.to!, b) - Math.max(f.from!, a)) / HOUR;
function expected(facts: Fact[], from: number, to: number, groupBy: 'day' | 'hour' | 'project' | 'deployment') {
  const groups = new Map<string | null, Record<Metric, number>>();
  const add = (key: string | null, m: Metric, v: number) => {
    if (!v) return;
    const g = groups.get(key) ?? (Object.fromEntries(METRICS.map((x) => [x, 0])) as Record<Metric, number>);
    g[m] += v;
    groups.set(key, g);
  };
  const days: [number, number][] = [];
  for (let d = from; d < to;) {
    const day = new Date(d);
    const next = Math.min(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate() + 1), to);
    days.push([d, next]);
    d = next;
  }
  const hours: [number, number][] = [];
  for (let t = from; t < to; t += HOUR) hours.push([t, t + HOUR]);
  const dayKey = (t: number) => new Date(t).toISOString().slice(0, 10);
  const hourKey = (t: number) => new Date(Math.floor(t / HOUR) * HOUR).toISOString();
  const timeKey = groupBy === 'day' ? dayKey : groupBy === 'hour' ? hourKey : undefined;
  const windows = groupBy === 'day' ? days : groupBy === 'hour' ? hours : [[from, to] as [number, number]];
  for (const f of facts) {
    const key = groupBy === 'project' ? f.projectId : groupBy === 'deployment' ? f.deploymentId : null;
    if (f.at !== undefined) {
      if (f.at >= from && f.at < to) add(timeKey ? timeKey(f.at) : key, f.metric, f.value!);
    } else for (const [a, b] of windows) add(timeKey ? timeKey(a) : key, f.metric, f.perHour! * overlapH(f, a, b));
  }
  return groups;
}

describe('GET /platform/usage: usage per organisation from the records the platform keeps', () => {
  let h: Harness;
  let image: string;
  const schedules: { delete(): Promise<void> }[] = [];
  beforeAll(async () => {
    h = await startHarness('usage', {
      // A database of its own: the roll-up marks hours for every organisation at once, and a worker of another file
      // on this stack (its schedules run the roll-up too) would mark the past hours this file fills with records
      // before it has written them.
      MONGODB_DB: 'slipway_usage_test',
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
      METRICS_SAMPLE_S: '1',
      DEPLOY_READY_TIMEOUT_S: '60',
      // The AI builder's provider is a double on loopback.
      ALLOW_PRIVATE_AI_PROVIDERS: 'true',
    });
    image = await buildFixtureImage(h.docker, 'hello');
  }, 300_000);
  afterAll(async () => {
    for (const s of schedules) await s.delete().catch(() => undefined);
    await h?.stop();
  });

  const rollUp = () =>
    h.temporal.workflow.execute(USAGE_ROLLUP_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: `usage-rollup-test-${randomUUID()}`,
    }) as Promise<{ hours: string[]; records: number }>;

  /** Compares an answer with the expected groups, figure by figure (the answer is rounded to 9 decimals). */
  function expectMatches(body: UsageBody['data'], want: Map<string | null, Record<Metric, number>>) {
    const got = new Map(body.groups.map((g) => [g.key, g.usage]));
    expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
    for (const [key, figures] of want)
      for (const m of METRICS) {
        expect([key, m, got.get(key)![m].value]).toEqual([key, m, expect.any(Number)]);
        expect(Math.abs(got.get(key)![m].value - figures[m])).toBeLessThan(1e-8);
      }
    for (const m of METRICS) {
      const sum = [...want.values()].reduce((s, f) => s + f[m], 0);
      expect(Math.abs(body.total[m].value - sum)).toBeLessThan(1e-8);
    }
  }

  it('answers a past period from its hourly records, the same after the raw samples are swept, per day, hour, project and deployment', async () => {
    const a = await h.newOrgWithProject('pro');
    const b = await h.newOrgWithProject('pro');
    const apiA = client(h, a.token);
    const apiB = client(h, b.token);
    const now = Date.now();
    // Three closed hours, well inside the retention and past the roll-up's grace.
    const p0 = Math.floor(now / HOUR) * HOUR - 4 * HOUR;
    const p1 = p0 + 3 * HOUR;
    const t = (min: number) => new Date(p0 + min * 60_000);
    const facts: Fact[] = [];
    const factsB: Fact[] = [];

    // Deployments as the api writes them (destroyed since: their usage stays), with their status events.
    const store = createDeploymentStore(h.db);
    const ev = (status: DeploymentEvent['status'], at: Date): DeploymentEvent => ({ status, message: status, at });
    const deployment = async (orgId: string, projectId: string | null, events: DeploymentEvent[]) => {
      const id = randomUUID();
      const record: DeploymentRecord = {
        _id: id,
        orgId,
        createdBy: 'test',
        origin: 'platform',
        name: `u-${id.slice(0, 6)}`,
        provider: 'engine_local',
        source: { type: 'image', image: 'example/app:1' },
        port: 8080,
        ...(projectId ? { projectId } : {}),
        revision: 1,
        status: 'stopped',
        version: events.length,
        events,
        createdAt: events[0]!.at,
        updatedAt: events.at(-1)!.at,
        destroyedAt: new Date(p1),
      };
      await store.insert(record);
      return id;
    };
    // dA1: builds 10–25 min into the period, and again from 50 min into its second hour to 20 min into the third.
    const dA1 = await deployment(a.orgId, a.projectId, [
      ev('queued', t(5)),
      ev('building', t(10)),
      ev('deploying', t(25)),
      ev('running', t(26)),
      ev('building', t(110)),
      ev('failed', t(140)),
    ]);
    facts.push(
      { metric: 'buildMinutes', projectId: a.projectId, deploymentId: dA1, from: +t(10), to: +t(25), perHour: 60 },
      { metric: 'buildMinutes', projectId: a.projectId, deploymentId: dA1, from: +t(110), to: +t(140), perHour: 60 },
    );
    const dA2 = await deployment(a.orgId, null, [ev('queued', t(1)), ev('running', t(2))]);
    const dB1 = await deployment(b.orgId, b.projectId, [ev('building', t(-30)), ev('running', t(30))]);
    factsB.push({
      metric: 'buildMinutes',
      projectId: b.projectId,
      deploymentId: dB1,
      from: +t(0),
      to: +t(30),
      perHour: 60,
    });

    // Metrics samples as the sampling activity stores them; one just before and one at the end are outside.
    const samples: MetricsSample[] = [];
    const sample = (deploymentId: string, orgId: string, at: Date, cpuPercent: number, memoryBytes: number) =>
      samples.push({
        deploymentId,
        orgId,
        instance: `slipway-${deploymentId}-r1`,
        revision: 1,
        replica: 0,
        at,
        cpuPercent,
        memoryBytes,
        memoryLimitBytes: GIB,
        networkRxBytes: 0,
        networkTxBytes: 0,
        blockReadBytes: 0,
        blockWriteBytes: 0,
        pids: 3,
      });
    for (let i = 0; i < 180; i += 7) {
      sample(dA1, a.orgId, t(i), 12.5 + (i % 5), 50_000_000 + i * 1000);
      sample(dA2, a.orgId, new Date(+t(i) + 30_000), 3.25, 20_000_000);
      sample(dB1, b.orgId, t(i), 80, 900_000_000);
    }
    sample(dA1, a.orgId, new Date(p0 - 1), 99, 999);
    sample(dA1, a.orgId, new Date(p1), 99, 999);
    await createMetricsStore(h.db).insert(samples);
    const ownerOf = new Map<string, string | null>([
      [dA1, a.projectId],
      [dA2, null],
      [dB1, b.projectId],
    ]);
    for (const s of samples) {
      // Each sample stands for the sampling interval, METRICS_SAMPLE_S (1 s here).
      const into = s.orgId === a.orgId ? facts : factsB;
      const who = { projectId: ownerOf.get(s.deploymentId) ?? null, deploymentId: s.deploymentId, at: +s.at };
      into.push({ metric: 'cpuSeconds', ...who, value: s.cpuPercent / 100 });
      into.push({ metric: 'memoryGbHours', ...who, value: s.memoryBytes / 3600 / GIB });
    }

    // Builder turns' tokens as the turn activity records them.
    const ai = createAiUsage(h.db);
    for (const [orgId, projectId, at, input, output, into] of [
      [a.orgId, a.projectId, t(20), 1200, 340, facts],
      [a.orgId, a.projectId, t(150), 800, 90, facts],
      [b.orgId, b.projectId, t(20), 5000, 5000, factsB],
    ] as const) {
      await ai.record({
        _id: `${randomUUID()}:1`,
        orgId,
        projectId,
        sessionId: randomUUID(),
        turnId: randomUUID(),
        inputTokens: input,
        outputTokens: output,
        at,
      });
      into.push({ metric: 'aiInputTokens', projectId, deploymentId: null, at: +at, value: input });
      into.push({ metric: 'aiOutputTokens', projectId, deploymentId: null, at: +at, value: output });
    }

    // The edge router's readings as the sampler stores them: cumulative counters per host, a reload between two.
    const readings = createEdgeReadings(h.db);
    const edge = `http://past-router-${randomUUID()}`;
    const reading = async (at: Date, epoch: string, hosts: [string, number, string | null][]) => {
      const r: EdgeReading = {
        _id: `${edge}|${+at}`,
        edge,
        at,
        epoch,
        hosts: hosts.map(([host, n, deploymentId]) => ({
          host,
          deploymentId,
          requests: n,
          requestBytes: n * 300,
          responseBytes: n * 1000,
        })),
      };
      await readings.insert(r);
    };
    const hostA = `a-${dA1.slice(0, 8)}.localhost`;
    const hostB = `b-${dB1.slice(0, 8)}.localhost`;
    await reading(new Date(p0 - 60_000), '1/1', [[hostA, 10, dA1]]);
    await reading(t(30), '1/1', [
      [hostA, 15, dA1], // +5
      [hostB, 3, dB1], // a new host: +3
      ['nobody.localhost', 50, null], // no deployment's: nobody's
    ]);
    await reading(t(90), '1/2', [[hostA, 4, dA1]]); // reloaded: +4
    await reading(t(179), '1/2', [[hostA, 10, dA1]]); // +6
    await reading(new Date(p1 + 60_000), '1/2', [[hostA, 100, dA1]]); // after the period
    for (const [at, n] of [
      [t(30), 5],
      [t(90), 4],
      [t(179), 6],
    ] as const) {
      const who = { projectId: a.projectId, deploymentId: dA1, at: +at };
      facts.push({ metric: 'requests', ...who, value: n });
      facts.push({ metric: 'requestBytes', ...who, value: n * 300 });
      facts.push({ metric: 'responseBytes', ...who, value: n * 1000 });
    }
    factsB.push({ metric: 'requests', projectId: b.projectId, deploymentId: dB1, at: +t(30), value: 3 });
    factsB.push({ metric: 'requestBytes', projectId: b.projectId, deploymentId: dB1, at: +t(30), value: 900 });
    factsB.push({ metric: 'responseBytes', projectId: b.projectId, deploymentId: dB1, at: +t(30), value: 3000 });

    // Storage: a 2 GB volume held from 30 min in to the third hour, a backup kept since before the period.
    const ledger = createStorageLedger(h.db);
    const volume = { _id: randomUUID(), orgId: a.orgId, projectId: a.projectId, sizeGb: 2 };
    await ledger.started(volumeFact(volume, t(30)));
    await ledger.ended(volumeFact(volume, t(120)));
    facts.push({
      metric: 'volumeGbHours',
      projectId: a.projectId,
      deploymentId: null,
      from: +t(30),
      to: +t(120),
      perHour: 2,
    });
    const backup = { _id: randomUUID(), orgId: a.orgId, projectId: null, sizeBytes: 123_456_789 };
    await ledger.started(backupFact(backup, new Date(p0 - 2 * HOUR)));
    facts.push({
      metric: 'backupGbHours',
      projectId: null,
      deploymentId: null,
      from: p0,
      to: p1,
      perHour: backup.sizeBytes / GIB,
    });

    // A real bucket, measured by listing it (as GET /buckets/{id} does) at two moments of the period.
    const made = await apiA.post<{ data: { id: string } }>('/platform/buckets', {
      name: 'usage-files',
      projectId: a.projectId,
    });
    expect(made.status).toBe(201);
    const bucket = (await createBucketStore(h.db).get(a.orgId, made.body.data.id))!;
    const bucketUsage = createBucketUsage(h.db, h.s3);
    await h.s3.send(new PutObjectCommand({ Bucket: bucket.s3Name, Key: 'one', Body: Buffer.alloc(1000) }));
    expect((await bucketUsage.current(bucket, t(15))).bytes).toBe(1000);
    await h.s3.send(new PutObjectCommand({ Bucket: bucket.s3Name, Key: 'two', Body: Buffer.alloc(2000) }));
    expect((await bucketUsage.current(bucket, t(75))).bytes).toBe(3000);
    facts.push(
      {
        metric: 'bucketGbHours',
        projectId: a.projectId,
        deploymentId: null,
        from: +t(15),
        to: +t(75),
        perHour: 1000 / GIB,
      },
      {
        metric: 'bucketGbHours',
        projectId: a.projectId,
        deploymentId: null,
        from: +t(75),
        to: p1,
        perHour: 3000 / GIB,
      },
    );

    // The roll-up, as its schedule runs it: every closed hour of the period becomes records and a marker.
    const report = await rollUp();
    for (const hour of [p0, p0 + HOUR, p0 + 2 * HOUR]) expect(report.hours).toContain(new Date(hour).toISOString());
    const from = new Date(p0).toISOString();
    const to = new Date(p1).toISOString();
    const ask = async (api: typeof apiA, groupBy: string) => {
      const r = await api.get<UsageBody>(`/platform/usage?from=${from}&to=${to}&groupBy=${groupBy}`);
      expect(r.status).toBe(200);
      return r.body.data;
    };
    const answers: Record<string, UsageBody['data']> = {};
    for (const groupBy of ['day', 'hour', 'project', 'deployment'] as const) {
      const got = await ask(apiA, groupBy);
      expect(got).toMatchObject({
        from: new Date(p0).toISOString(),
        to: new Date(p1).toISOString(),
        groupBy,
        plan: 'pro',
      });
      expect(got.hours).toEqual({ rolledUp: 3, live: 0 });
      expectMatches(got, expected(facts, p0, p1, groupBy));
      answers[groupBy] = got;
    }
    // The plan's storage bounds for the period; no other figure has one.
    expect(answers.day!.total.volumeGbHours.limit).toBe(100 * 3);
    expect(answers.day!.total.databaseGbHours.limit).toBe(200 * 3);
    expect(answers.day!.total.cpuSeconds.limit).toBeNull();

    // Another organisation's records are never counted, and it sees only its own.
    expect(JSON.stringify(answers.deployment)).not.toContain(dB1);
    const gotB = await ask(apiB, 'deployment');
    expectMatches(gotB, expected(factsB, p0, p1, 'deployment'));
    expect(JSON.stringify(gotB)).not.toContain(dA1);

    // A roll-up run again, and one that stopped before its marker, count nothing twice.
    const records = h.db.collection('usage_hourly');
    const before = await records.countDocuments({ orgId: a.orgId });
    expect((await rollUp()).hours).not.toContain(from);
    await h.db.collection<{ _id: string }>('usage_rollups').deleteOne({ _id: new Date(p0 + HOUR).toISOString() });
    expect((await rollUp()).hours).toContain(new Date(p0 + HOUR).toISOString());
    expect(await records.countDocuments({ orgId: a.orgId })).toBe(before);
    expect(await ask(apiA, 'deployment')).toEqual(answers.deployment);

    // The sweep removes the raw samples and readings: the period answers the same.
    await createMetricsStore(h.db).sweep(new Date(p1 + 1));
    await readings.sweep(new Date(p1 + HOUR));
    expect(await h.db.collection('deployment_metrics').countDocuments({ deploymentId: dA1 })).toBe(0);
    for (const groupBy of ['day', 'hour', 'project', 'deployment'] as const)
      expect(await ask(apiA, groupBy)).toEqual(answers[groupBy]);

    // Through MCP, as an agent calls the tool: the same answer.
    const agent = await connectAgent(h.baseUrl, a.token);
    try {
      const r = await agent.call('get_usage', { from, to, groupBy: 'project' });
      expect(r.isError).toBe(false);
      expect(r.s).toEqual(answers.project);
      const bad = await agent.call('get_usage', { from: to, to: from });
      expect(bad.isError).toBe(true);
      expect(bad.s.code).toBe('INVALID_REQUEST');
    } finally {
      await agent.client.close();
    }
  }, 600_000);

  it('refuses bad ranges, saying what to send instead', async () => {
    const org = await h.newOrg('free');
    const api = client(h, org.token);
    for (const [query, said] of [
      ['from=2026-10-02&to=2026-10-01', /must be before to/],
      ['from=2026-10-01T05:00:00Z&to=2026-10-01T05:00:00Z', /must be before to/],
      ['from=2024-01-01&to=2026-01-01', /longer than 366 days/],
      ['from=2026-02-30', /not a real date/],
      ['from=yesterday', /UTC date/],
      ['from=2026-10-01T05:00:00%2B02:00', /ending in Z/],
      ['groupBy=week', /day, hour, project or deployment/],
      ['from=2026-10-01&to=2026-11-02&groupBy=hour', /groupBy=hour covers at most 31 days/],
      ['limit=3', /limit/],
    ] as const) {
      const r = await api.get<{ status: string; message: string }>(`/platform/usage?${query}`);
      expect([query, r.status, r.body.status]).toEqual([query, 400, 'error']);
      expect(r.body.message).toMatch(said);
    }
    // The defaults: the current month so far, to the end of the current hour.
    const r = await api.get<UsageBody>('/platform/usage');
    expect(r.status).toBe(200);
    const now = new Date();
    expect(r.body.data.from).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    expect(Date.parse(r.body.data.to)).toBe(Math.floor(Date.now() / HOUR) * HOUR + HOUR);
    expect(r.body.data.groups).toEqual([]);
  });

  it('counts a real deployment: its instances as the metrics schedule samples them, its requests through the edge router', async () => {
    const org = await h.newOrgWithProject('pro');
    const api = client(h, org.token);
    const started = Math.floor(Date.now() / HOUR) * HOUR;
    const handles = await ensureMetricsSchedules(h.temporal, {
      taskQueue: h.taskQueue,
      sampleEveryS: 1,
      sweepEveryS: 3600,
    });
    schedules.push(handles.sample, handles.sweep);
    const created = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      image,
      name: 'metered',
      port: 8080,
      projectId: org.projectId,
    });
    expect(created.status).toBe(202);
    const id = created.body.data.deployment.id;
    const url = await eventually(
      async () => {
        const d = (await api.get<{ data: { status: string; url?: string } }>(`/platform/deployments/${id}`)).body.data;
        if (d.status === 'failed') throw new Error(`the deployment failed: ${JSON.stringify(d)}`);
        return d.status === 'running' ? d.url : undefined;
      },
      'the deployment running',
      180_000,
    );
    // The router has been read since the route exists, so the next reading has a base to count from.
    const readings = h.db.collection<EdgeReading>('edge_readings');
    const since = new Date();
    await eventually(
      async () =>
        (await readings.countDocuments({ edge: h.config.EDGE_ADMIN_URL, at: { $gt: since } })) >= 2 ? true : undefined,
      'two readings of the router',
    );

    const agent = edgeAgent();
    let bodyBytes = 0;
    for (let i = 0; i < 5; i++) {
      const answer = await edgeGet(url!, { agent });
      expect(answer.status).toBe(200);
      bodyBytes += Buffer.byteLength(answer.body);
    }
    const window = `from=${new Date(started).toISOString()}&to=${new Date(started + 2 * HOUR).toISOString()}`;
    const usageOf = async () => {
      const r = await api.get<UsageBody>(`/platform/usage?${window}&groupBy=deployment`);
      expect(r.status).toBe(200);
      return r.body.data.groups.find((g) => g.key === id)?.usage;
    };
    await eventually(
      async () => ((await usageOf())?.requests.value === 5 ? true : undefined),
      'five requests counted',
      60_000,
    );

    // Sampling stopped, the answer settles on exactly what the raw samples add up to, computed here.
    await handles.sample.pause();
    await eventually(async () => {
      const raw = await h.db
        .collection<MetricsSample>('deployment_metrics')
        .find({ deploymentId: id, at: { $gte: new Date(started) } })
        .toArray();
      const usage = await usageOf();
      const cpu = raw.reduce((s, x) => s + x.cpuPercent / 100, 0);
      const mem = raw.reduce((s, x) => s + x.memoryBytes / 3600 / GIB, 0);
      return raw.length > 0 &&
        Math.abs(usage!.cpuSeconds.value - cpu) < 1e-8 &&
        Math.abs(usage!.memoryGbHours.value - mem) < 1e-8
        ? true
        : undefined;
    }, 'usage equal to the samples');
    const usage = (await usageOf())!;
    expect(usage.requests.value).toBe(5);
    expect(usage.responseBytes.value).toBe(bodyBytes);
    expect(usage.requestBytes.value).toBeGreaterThan(0);
    expect(usage.memoryGbHours.value).toBeGreaterThan(0);
    await handles.sample.unpause();
    expect((await api.del(`/platform/deployments/${id}`)).status).toBe(204);
  }, 600_000);

  it("counts a builder turn's tokens as its provider reported them, step by step, in the session's project", async () => {
    const double = await startOpenAiDouble({ models: ['gpt-4o-mini'] });
    try {
      const org = await h.newOrgWithProject('pro');
      const api = client(h, org.token);
      const hour = Math.floor(Date.now() / HOUR) * HOUR;
      type Data = { data: { id: string; status?: string } };
      const provider = await api.post<Data>('/platform/ai-providers', {
        name: 'double',
        kind: 'openai_compatible',
        baseUrl: double.baseUrl,
        apiKey: double.apiKey,
        defaultModel: 'gpt-4o-mini',
      });
      expect(provider.status).toBe(200);
      const session = await api.post<Data>('/platform/builder/sessions', {
        projectId: org.projectId,
        providerId: provider.body.data.id,
      });
      // Two model steps: a tool call, then the answer, each with the usage its provider streams last.
      double.reply(
        {
          stream: openai.toolCalls(
            [{ id: 'call_1', name: 'write_file', args: ['{"path":"index.html","content":"<h1>Hi</h1>"}'] }],
            { usage: [120, 30] },
          ),
        },
        { stream: openai.text(['Done.'], { usage: [200, 15] }) },
      );
      const turn = await api.post<Data>(`/platform/builder/sessions/${session.body.data.id}/messages`, {
        content: 'Make a page',
      });
      expect([turn.status, turn.body.data.status]).toEqual([200, 'completed']);
      const window = `from=${new Date(hour).toISOString()}&to=${new Date(hour + 2 * HOUR).toISOString()}`;
      const r = await api.get<UsageBody>(`/platform/usage?${window}&groupBy=project`);
      const usage = r.body.data.groups.find((g) => g.key === org.projectId)?.usage;
      expect([usage?.aiInputTokens.value, usage?.aiOutputTokens.value]).toEqual([320, 45]);
      expect(r.body.data.total.aiInputTokens.value).toBe(320);
    } finally {
      await double.close();
    }
  });
});
