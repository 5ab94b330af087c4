import fs from 'node:fs';
import path from 'node:path';

import { periodOf } from '@api/features/usage/service';
import { AppError } from '@shared/errors';
import type { BucketUsageSample } from '@shared/usage/bucket-usage';
import { deltasOf, type EdgeReading, parseCaddyMetrics, readingDeltas } from '@shared/usage/edge-counters';
import { hostOwners } from '@shared/usage/edge-sampler';
import { buildIntervals, hourRecords } from '@shared/usage/hourly';
import { bucketByteHours } from '@shared/usage/storage-usage';

/**
 * `/metrics` of Caddy v2.11.9 with per_host and observe_catchall_hosts on, our server on a port other than 80: a
 * subroute route (3 POSTs, Host with the port), a proxy route (a GET with the port, one without), an unknown host.
 */
const CADDY = fs.readFileSync(path.join(__dirname, '../fixtures/caddy-metrics-per-host.txt'), 'utf8');

const HOUR = new Date('2026-10-05T10:00:00Z');
const at = (min: number, s = 0) => new Date(HOUR.getTime() + min * 60_000 + s * 1000);

describe('parseCaddyMetrics: the per-host series of our server, from real Caddy output', () => {
  it('adds up each host of our server without its port, leaving out other servers', () => {
    const { hosts, epoch } = parseCaddyMetrics(CADDY, 'slipway');
    expect(Object.fromEntries(hosts)).toEqual({
      // Counted once under the route's subroute, not again under the proxy inside it.
      'web-abc123.localhost': { requests: 3, requestBytes: 426, responseBytes: 57 },
      // With and without the port: one host.
      'api-def456.localhost': { requests: 2, requestBytes: 132, responseBytes: 38 },
      // Counted by the router; the sampler keeps only hosts of our routes.
      'nobody.example': { requests: 1, requestBytes: 62, responseBytes: 47 },
    });
    expect(epoch).toMatch(/^\d\.\d+e\+09\/\d\.\d+e\+09$/);
  });

  it('reads another server by its name, and nothing from text without the series', () => {
    expect(parseCaddyMetrics(CADDY, 'upstream').hosts.get('web-abc123.localhost')?.requests).toBe(3);
    expect(
      parseCaddyMetrics('caddy_http_requests_total{handler="subroute",host="_other",server="slipway"} 5', 'slipway')
        .hosts.size,
    ).toBe(0);
    expect(parseCaddyMetrics('# HELP x\nfoo 1\n', 'slipway')).toEqual({ epoch: null, hosts: new Map() });
  });
});

const reading = (atMs: Date, epoch: string, hosts: [string, number, string | null][]): EdgeReading => ({
  _id: `e|${atMs.getTime()}`,
  edge: 'e',
  at: atMs,
  epoch,
  hosts: hosts.map(([host, n, deploymentId]) => ({
    host,
    deploymentId,
    requests: n,
    requestBytes: n * 100,
    responseBytes: n * 10,
  })),
});

describe('readingDeltas: what happened between two readings of one router', () => {
  it('counts the growth of each host, and all of a host that appeared since', () => {
    const prev = reading(at(0), 'p1/r1', [['a.localhost', 5, 'd1']]);
    const cur = reading(at(1), 'p1/r1', [
      ['a.localhost', 8, 'd1'],
      ['b.localhost', 2, 'd2'],
    ]);
    expect(readingDeltas(prev, cur)).toEqual([
      { host: 'a.localhost', deploymentId: 'd1', requests: 3, requestBytes: 300, responseBytes: 30 },
      { host: 'b.localhost', deploymentId: 'd2', requests: 2, requestBytes: 200, responseBytes: 20 },
    ]);
  });

  it('counts the whole later value after a restart or reload, even one that grew past the earlier value', () => {
    const prev = reading(at(0), 'p1/r1', [['a.localhost', 5, 'd1']]);
    expect(readingDeltas(prev, reading(at(1), 'p1/r2', [['a.localhost', 9, 'd1']]))[0]?.requests).toBe(9);
    // Same epoch text but a counter that went down (an epoch not shown): a restart too.
    expect(readingDeltas(prev, reading(at(1), 'p1/r1', [['a.localhost', 2, 'd1']]))[0]?.requests).toBe(2);
  });

  it('keeps the owner of a host whose route went between the readings, and counts nothing without a base', () => {
    const prev = reading(at(0), 'p', [['a.localhost', 1, 'd1']]);
    expect(readingDeltas(prev, reading(at(1), 'p', [['a.localhost', 4, null]]))[0]?.deploymentId).toBe('d1');
    expect(readingDeltas(undefined, reading(at(1), 'p', [['a.localhost', 4, 'd1']]))).toEqual([]);
  });

  it('chains each router on its own and dates each delta by its later reading', () => {
    const other = (r: EdgeReading): EdgeReading => ({ ...r, edge: 'f', _id: `f|${r.at.getTime()}` });
    const deltas = deltasOf([
      reading(at(0), 'p', [['a.localhost', 1, 'd1']]),
      other(reading(at(0), 'q', [['a.localhost', 100, 'd1']])),
      reading(at(2), 'p', [['a.localhost', 3, 'd1']]),
      other(reading(at(1), 'q', [['a.localhost', 150, 'd1']])),
    ]);
    expect(deltas.map((d) => [d.at.toISOString(), d.requests]).sort()).toEqual([
      [at(1).toISOString(), 50],
      [at(2).toISOString(), 2],
    ]);
  });

  it('maps each route host to its deployment', () => {
    expect(hostOwners([{ host: 'web-abc.localhost', deploymentId: 'd1' }]).get('web-abc.localhost')).toBe('d1');
  });
});

describe('hourRecords: one hour of usage from its raw records', () => {
  const deployments = new Map([
    ['d1', { _id: 'd1', orgId: 'o1', projectId: 'p1' }],
    [
      'd2',
      {
        _id: 'd2',
        orgId: 'o2',
        projectId: null,
        // Builds 09:50–10:05 and 10:50 on (no later event): 5 + 10 minutes of this hour.
        events: [
          { status: 'queued' as const, at: new Date('2026-10-05T09:49:00Z') },
          { status: 'building' as const, at: new Date('2026-10-05T09:50:00Z') },
          { status: 'deploying' as const, at: at(5) },
          { status: 'running' as const, at: at(6) },
          { status: 'building' as const, at: at(50) },
        ],
      },
    ],
  ]);
  const rows = hourRecords({
    hour: HOUR,
    sampleEveryS: 15,
    samples: [
      { deploymentId: 'd1', orgId: 'o1', at: at(0), cpuPercent: 50, memoryBytes: 3600 },
      { deploymentId: 'd1', orgId: 'o1', at: at(59, 59), cpuPercent: 150, memoryBytes: 7200 },
      // The next hour's: not this one's.
      { deploymentId: 'd1', orgId: 'o1', at: at(60), cpuPercent: 999, memoryBytes: 999 },
    ],
    deployments,
    ai: [
      {
        _id: 't:1',
        orgId: 'o1',
        projectId: 'p1',
        sessionId: 's',
        turnId: 't',
        inputTokens: 120,
        outputTokens: 30,
        at: at(10),
      },
    ],
    edge: [
      { host: 'a', deploymentId: 'd1', requests: 4, requestBytes: 400, responseBytes: 40, at: at(20) },
      // A host no deployment holds counts for nobody.
      { host: 'x', deploymentId: null, requests: 9, requestBytes: 9, responseBytes: 9, at: at(20) },
    ],
  });
  const value = (id: string) => rows.find((r) => r._id === `2026-10-05T10:00:00.000Z/${id}`)?.value;

  it('integrates each sample over the sampling interval it stands for', () => {
    expect(value('o1/d1/cpuSeconds')).toBe(0.5 * 15 + 1.5 * 15);
    expect(value('o1/d1/memoryByteHours')).toBe((3600 * 15) / 3600 + (7200 * 15) / 3600);
  });

  it('clips builds to the hour, keys tokens by project and requests by deployment, one record per key', () => {
    expect(value('o2/d2/buildSeconds')).toBe(15 * 60);
    expect(value('o1/p:p1/aiInputTokens')).toBe(120);
    expect(value('o1/p:p1/aiOutputTokens')).toBe(30);
    expect(value('o1/d1/requests')).toBe(4);
    expect(value('o1/d1/responseBytes')).toBe(40);
    expect(rows.map((r) => r._id)).toHaveLength(new Set(rows.map((r) => r._id)).size);
    expect(rows).toHaveLength(8);
    expect(rows.every((r) => r.hour === HOUR)).toBe(true);
  });

  it('reads a build on while no event follows it', () => {
    expect(buildIntervals([{ status: 'building', at: at(1) }])).toEqual([[at(1).getTime(), Infinity]]);
  });
});

describe('bucketByteHours: a bucket holds its measured bytes until its next sample', () => {
  const sample = (bucketId: string, bytes: number, when: Date): BucketUsageSample => ({
    _id: `${bucketId}:${when.getTime()}`,
    orgId: 'o',
    projectId: 'p',
    bucketId,
    objects: 1,
    bytes,
    partial: false,
    at: when,
  });
  it('counts the sample before the period from its start, and stops at an emptied (deleted) bucket', () => {
    const from = at(0);
    const to = at(120);
    const rows = bucketByteHours(
      [sample('b', 1000, at(-30)), sample('b', 3000, at(30)), sample('b', 0, at(90)), sample('c', 50, at(150))],
      from,
      to,
    );
    expect(rows).toEqual([{ kind: 'bucket', projectId: 'p', resourceId: 'b', byteHours: 1000 * 0.5 + 3000 * 1 }]);
  });
});

describe('periodOf: the period asked for, in whole UTC hours', () => {
  const now = Date.parse('2026-11-26T15:41:27Z');
  const iso = (p: { from: number; to: number }) => [new Date(p.from).toISOString(), new Date(p.to).toISOString()];

  it('defaults to the current month so far, to the end of the current hour', () => {
    expect(iso(periodOf({}, now))).toEqual(['2026-11-01T00:00:00.000Z', '2026-11-26T16:00:00.000Z']);
  });

  it('takes dates as their UTC midnight and rounds instants out to whole hours', () => {
    expect(iso(periodOf({ from: '2026-10-01', to: '2026-10-02T05:10:00Z' }, now))).toEqual([
      '2026-10-01T00:00:00.000Z',
      '2026-10-02T06:00:00.000Z',
    ]);
  });

  it.each([
    [{ from: '2026-10-02', to: '2026-10-01' }, /must be before to/],
    [{ from: '2026-10-01T05:00:00Z', to: '2026-10-01T05:00:00Z' }, /must be before to/],
    [{ from: '2024-01-01', to: '2026-01-01' }, /longer than 366 days/],
    [{ from: '2026-02-30' }, /not a real date/],
  ])('refuses %j, saying why', (q, why) => {
    expect(() => periodOf(q, now)).toThrow(AppError);
    expect(() => periodOf(q, now)).toThrow(why);
  });
});
