import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';
import type { DeploymentEvent } from '../deployments/types';
import type { AiUsageEntry } from './ai-usage';
import type { HostDelta } from './edge-counters';

/**
 * Usage per organisation, deployment and UTC hour (docs/architecture.md, "Usage"). Raw records that are swept
 * (metrics samples, edge readings) or rewritten (a deployment's events) are rolled up, once their hour has closed,
 * into immutable `usage_hourly` documents, one per org / deployment (or project) / hour / metric under a key that
 * says which, so a roll-up run again inserts the same keys and counts nothing twice. A marker in `usage_rollups`
 * says an hour is done; until then the same computation runs over the raw records at read time.
 */
export const USAGE_METRICS = [
  /** CPU time: each sample's share of one CPU for the sampling interval it stands for. */
  'cpuSeconds',
  /** Memory held: each sample's bytes for its interval, in byte-hours. */
  'memoryByteHours',
  /** Time in status `building`, clipped to the hour. */
  'buildSeconds',
  'requests',
  'requestBytes',
  'responseBytes',
  'aiInputTokens',
  'aiOutputTokens',
] as const;
export type UsageMetric = (typeof USAGE_METRICS)[number];

export interface UsageRecord {
  /** `<hour ISO>/<orgId>/<deploymentId, or p:<projectId or ->>/<metric>`. */
  _id: string;
  orgId: string;
  projectId: string | null;
  deploymentId: string | null;
  hour: Date;
  metric: UsageMetric;
  value: number;
}

export const HOUR_MS = 3_600_000;
export const floorHour = (t: number) => Math.floor(t / HOUR_MS) * HOUR_MS;

/** One metrics sample as the roll-up reads it. */
export interface SampleLike {
  deploymentId: string;
  orgId: string;
  at: Date;
  cpuPercent: number;
  memoryBytes: number;
}

/** A deployment's identity and, for builds, its events. */
export interface DeploymentLike {
  _id: string;
  orgId: string;
  projectId?: string | null;
  events?: Pick<DeploymentEvent, 'status' | 'at'>[];
}

export interface HourInputs {
  hour: Date;
  /** Seconds each sample stands for: the sampling schedule's interval. */
  sampleEveryS: number;
  samples: readonly SampleLike[];
  /** Deployments named by samples or deltas, and every one with events that may overlap the hour. */
  deployments: ReadonlyMap<string, DeploymentLike>;
  ai: readonly AiUsageEntry[];
  edge: readonly (HostDelta & { at: Date })[];
}

/** Intervals [start, end) in status `building`: from each such event to the next event, or on while none follows. */
export function buildIntervals(events: readonly Pick<DeploymentEvent, 'status' | 'at'>[]): [number, number][] {
  const sorted = [...events].sort((a, b) => new Date(a.at).getTime() - new Date(b.at).getTime());
  const out: [number, number][] = [];
  sorted.forEach((e, i) => {
    if (e.status !== 'building') return;
    const next = sorted[i + 1];
    out.push([new Date(e.at).getTime(), next ? new Date(next.at).getTime() : Infinity]);
  });
  return out;
}

/** Every record of one hour, from its raw inputs (pure: the same inputs make the same records). */
export function hourRecords(inputs: HourInputs): UsageRecord[] {
  const start = inputs.hour.getTime();
  const end = start + HOUR_MS;
  const sums = new Map<string, UsageRecord>();
  const add = (
    who: { orgId: string; projectId: string | null; deploymentId: string | null },
    metric: UsageMetric,
    value: number,
  ) => {
    if (!value) return;
    const scope = who.deploymentId ?? `p:${who.projectId ?? '-'}`;
    const _id = `${inputs.hour.toISOString()}/${who.orgId}/${scope}/${metric}`;
    const r = sums.get(_id) ?? { _id, ...who, hour: inputs.hour, metric, value: 0 };
    r.value += value;
    sums.set(_id, r);
  };
  const owner = (deploymentId: string, orgId?: string) => {
    const d = inputs.deployments.get(deploymentId);
    return { orgId: d?.orgId ?? orgId ?? '', projectId: d?.projectId ?? null, deploymentId };
  };

  for (const s of inputs.samples) {
    const t = s.at.getTime();
    if (t < start || t >= end) continue;
    const who = owner(s.deploymentId, s.orgId);
    add(who, 'cpuSeconds', (s.cpuPercent / 100) * inputs.sampleEveryS);
    add(who, 'memoryByteHours', (s.memoryBytes * inputs.sampleEveryS) / 3600);
  }
  for (const d of inputs.deployments.values()) {
    for (const [from, to] of buildIntervals(d.events ?? [])) {
      const seconds = (Math.min(to, end) - Math.max(from, start)) / 1000;
      if (seconds > 0) add(owner(d._id), 'buildSeconds', seconds);
    }
  }
  for (const a of inputs.ai) {
    const t = a.at.getTime();
    if (t < start || t >= end) continue;
    const who = { orgId: a.orgId, projectId: a.projectId, deploymentId: null };
    add(who, 'aiInputTokens', a.inputTokens);
    add(who, 'aiOutputTokens', a.outputTokens);
  }
  for (const d of inputs.edge) {
    const t = d.at.getTime();
    // A host no deployment's route held counts for nobody.
    if (t < start || t >= end || !d.deploymentId) continue;
    const who = owner(d.deploymentId);
    if (!who.orgId) continue;
    add(who, 'requests', d.requests);
    add(who, 'requestBytes', d.requestBytes);
    add(who, 'responseBytes', d.responseBytes);
  }
  return [...sums.values()].sort((a, b) => (a._id < b._id ? -1 : 1));
}

interface RollupMarker {
  /** The hour's ISO start. */
  _id: string;
  hour: Date;
  records: number;
  at: Date;
}

/** `usage_hourly` and `usage_rollups`: inserts only, a duplicate key being the same record written before. */
export function createUsageRecords(db: Db) {
  const records = db.collection<UsageRecord>('usage_hourly');
  const markers = db.collection<RollupMarker>('usage_rollups');
  const ignoreDuplicate = (err: unknown) => {
    // Written by an earlier run of the same hour: the record stands as first written.
    if (!isDuplicateKey(err)) throw err;
  };
  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('usageRecords.createIndexes', async () => {
        await records.createIndex({ orgId: 1, hour: 1 });
        await markers.createIndex({ hour: 1 });
      });
    },

    /** Inserts the hour's records one by one, then its marker: a run stopped half-way is finished by the next. */
    async write(hour: Date, rows: readonly UsageRecord[]): Promise<void> {
      for (const r of rows)
        await guard('usageRecords.insert', () => records.insertOne({ ...r })).catch(ignoreDuplicate);
      await guard('usageRollups.insert', () =>
        markers.insertOne({ _id: hour.toISOString(), hour, records: rows.length, at: new Date() }),
      ).catch(ignoreDuplicate);
    },

    /** The starts (ms) of the hours in [from, to) already rolled up. */
    async doneHours(from: Date, to: Date): Promise<Set<number>> {
      const done = await guard('usageRollups.between', () =>
        markers.find({ hour: { $gte: from, $lt: to } }, { projection: { hour: 1 } }).toArray(),
      );
      return new Set(done.map((m) => m.hour.getTime()));
    },

    /** The organisation's records of hours in [from, to). */
    between: (orgId: string, from: Date, to: Date) =>
      guard('usageRecords.between', () =>
        records
          .find({ orgId, hour: { $gte: from, $lt: to } })
          .sort({ hour: 1, _id: 1 })
          .toArray(),
      ),
  };
}

export type UsageRecords = ReturnType<typeof createUsageRecords>;
