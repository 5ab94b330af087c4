import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';

/** The numbers of one sample, as `docker stats` computes them (shared/engine/observe.ts metricsFrom). */
export const SAMPLE_FIELDS = [
  'cpuPercent',
  'memoryBytes',
  'memoryLimitBytes',
  'networkRxBytes',
  'networkTxBytes',
  'blockReadBytes',
  'blockWriteBytes',
  'pids',
] as const;
export type SampleField = (typeof SAMPLE_FIELDS)[number];

/**
 * One instance's resource use at one moment, recorded by the worker's sampling schedule while the deployment runs.
 * Inserted once, never updated (no read-modify-write on FerretDB); removed by the sweep once past the retention,
 * since the embedded store has no TTL index.
 */
export interface MetricsSample extends Record<SampleField, number> {
  deploymentId: string;
  orgId: string;
  /** The instance's name (`slipway-<deploymentId>-r<revision>[-<replica>]`), its release and replica index. */
  instance: string;
  revision: number;
  replica: number;
  /** The engine's time of the sample. */
  at: Date;
}

export interface MetricsPoint extends Record<SampleField, number> {
  /** Start of the bucket. */
  at: string;
  /** Samples averaged into this point. */
  samples: number;
}

export interface MetricsSeries {
  instance: string;
  revision: number;
  replica: number;
  points: MetricsPoint[];
}

/**
 * Averages samples per instance into buckets of `stepS` seconds starting at `from`, in the application: FerretDB
 * 1.x has no date arithmetic in $group keys. Buckets with no sample are left out (a stopped deployment has none).
 */
export function bucketSamples(samples: Iterable<MetricsSample>, from: Date, stepS: number): MetricsSeries[] {
  const stepMs = stepS * 1000;
  const series = new Map<
    string,
    { s: MetricsSeries; sums: Map<number, Record<SampleField, number> & { n: number }> }
  >();
  for (const sample of samples) {
    let entry = series.get(sample.instance);
    if (!entry) {
      entry = {
        s: { instance: sample.instance, revision: sample.revision, replica: sample.replica, points: [] },
        sums: new Map(),
      };
      series.set(sample.instance, entry);
    }
    const bucket = Math.floor((sample.at.getTime() - from.getTime()) / stepMs);
    let sum = entry.sums.get(bucket);
    if (!sum) {
      sum = { n: 0, ...(Object.fromEntries(SAMPLE_FIELDS.map((f) => [f, 0])) as Record<SampleField, number>) };
      entry.sums.set(bucket, sum);
    }
    sum.n++;
    for (const f of SAMPLE_FIELDS) sum[f] += sample[f];
  }
  return [...series.values()]
    .map(({ s, sums }) => ({
      ...s,
      points: [...sums.entries()]
        .sort(([a], [b]) => a - b)
        .map(([bucket, sum]) => {
          const point = {
            at: new Date(from.getTime() + bucket * stepMs).toISOString(),
            samples: sum.n,
          } as MetricsPoint;
          for (const f of SAMPLE_FIELDS) {
            const mean = sum[f] / sum.n;
            // CPU keeps two decimals as docker stats shows it; the others are counts of bytes or processes.
            point[f] = f === 'cpuPercent' ? Math.round(mean * 100) / 100 : Math.round(mean);
          }
          return point;
        }),
    }))
    .sort((a, b) => a.revision - b.revision || a.replica - b.replica);
}

export function createMetricsStore(db: Db) {
  const col = db.collection<MetricsSample>('deployment_metrics');
  return {
    async ensureIndexes() {
      // One index per command (FerretDB 1.24 and multi-index createIndexes, see deployments' store).
      await ensureIndexesWithRetry('deployment_metrics.createIndexes', async () => {
        await col.createIndex({ deploymentId: 1, at: 1 });
        // The sweep deletes by age across every deployment.
        await col.createIndex({ at: 1 });
      });
    },

    async insert(samples: MetricsSample[]): Promise<void> {
      if (samples.length === 0) return;
      // Copies: insertMany adds _id to the documents it is given.
      await guard('deployment_metrics.insert', () =>
        col.insertMany(
          samples.map((s) => ({ ...s })),
          { ordered: false },
        ),
      );
    },

    /** The deployment's samples in [from, to), bucketed by `stepS`; the deployment is the caller's to check. */
    async history(deploymentId: string, q: { from: Date; to: Date; stepS: number }): Promise<MetricsSeries[]> {
      const samples = await guard('deployment_metrics.history', () =>
        col
          .find({ deploymentId, at: { $gte: q.from, $lt: q.to } }, { projection: { _id: 0 } })
          .sort({ at: 1 })
          .toArray(),
      );
      return bucketSamples(samples, q.from, q.stepS);
    },

    /** Deletes every sample older than `before`; returns how many. */
    async sweep(before: Date): Promise<number> {
      const result = await guard('deployment_metrics.sweep', () => col.deleteMany({ at: { $lt: before } }));
      return result.deletedCount;
    },
  };
}

export type MetricsStore = ReturnType<typeof createMetricsStore>;
