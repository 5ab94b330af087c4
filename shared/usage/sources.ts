import type { Db, Filter } from 'mongodb';

import { guard } from '../db/mongo';
import type { MetricsSample } from '../deployments/metrics-store';
import type { DeploymentRecord } from '../deployments/types';
import { createAiUsage } from './ai-usage';
import { createEdgeReadings, deltasOf } from './edge-counters';
import { type DeploymentLike, HOUR_MS, hourRecords, type UsageRecord } from './hourly';

/**
 * The raw records one hour's usage is made of, read the same way by the roll-up (every organisation) and by a read
 * of an hour not yet rolled up (one organisation): metrics samples, deployments' events, builder turns' tokens and
 * the edge router's readings.
 */
export function createUsageSources(db: Db, opts: { sampleEveryS: number }) {
  const samples = db.collection<MetricsSample>('deployment_metrics');
  const deployments = db.collection<DeploymentRecord>('deployments');
  const ai = createAiUsage(db);
  const edge = createEdgeReadings(db);
  const identity = { _id: 1, orgId: 1, projectId: 1 } as const;

  async function hour(start: Date, orgId?: string): Promise<UsageRecord[]> {
    const end = new Date(start.getTime() + HOUR_MS);
    const org = orgId ? { orgId } : {};
    const [hourSamples, building, tokens, readings] = await Promise.all([
      guard('usage.samples', () =>
        samples
          .find({ ...org, at: { $gte: start, $lt: end } }, { projection: { _id: 0 } })
          .sort({ at: 1 })
          .toArray(),
      ),
      // A build overlapping the hour began before its end and was followed by an event (or is on) at or after its
      // start, so the record was written at or after the start.
      guard('usage.builds', () =>
        deployments
          .find({ ...org, createdAt: { $lt: end }, updatedAt: { $gte: start } } as Filter<DeploymentRecord>, {
            projection: { ...identity, events: 1 },
          })
          .toArray(),
      ),
      ai.between(start, end, orgId),
      edge.around(start, end),
    ]);
    const deltas = deltasOf(readings);
    const known = new Map<string, DeploymentLike>(building.map((d) => [d._id, d]));
    const missing = [
      ...new Set([
        ...hourSamples.map((s) => s.deploymentId),
        ...deltas.flatMap((d) => (d.deploymentId ? [d.deploymentId] : [])),
      ]),
    ].filter((id) => !known.has(id));
    if (missing.length) {
      const more = await guard('usage.deployments', () =>
        deployments.find({ _id: { $in: missing } }, { projection: identity }).toArray(),
      );
      // Only for whom the samples and deltas count: their events are not this hour's builds.
      for (const d of more) known.set(d._id, { _id: d._id, orgId: d.orgId, projectId: d.projectId ?? null });
    }
    const rows = hourRecords({
      hour: start,
      sampleEveryS: opts.sampleEveryS,
      samples: hourSamples,
      deployments: known,
      ai: tokens,
      edge: deltas,
    });
    // The router's readings are not per organisation: another's hosts are dropped here.
    return orgId ? rows.filter((r) => r.orgId === orgId) : rows;
  }

  return { hour };
}

export type UsageSources = ReturnType<typeof createUsageSources>;
