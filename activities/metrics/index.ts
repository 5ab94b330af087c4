import { Context } from '@temporalio/activity';
import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';
import type { SampleReport, SweepReport } from '@shared/contracts/metrics';
import type { MetricsSample, MetricsStore } from '@shared/deployments/metrics-store';
import type { DeploymentStore } from '@shared/deployments/store';
import { type EngineStats, metricsFrom } from '@shared/engine/observe';
import type { EdgeReadings } from '@shared/usage/edge-counters';
import type { EdgeSampler } from '@shared/usage/edge-sampler';

/** Stats reads at once: each takes the engine about a second (it waits for a second CPU sample). */
const CONCURRENCY = 8;

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++]!;
        out.push(await fn(item));
      }
    }),
  );
  return out;
}

/**
 * The metrics history's recording side (README, "Platform deployment routes, health and metrics"): one schedule samples
 * every running instance of this Slipway instance's deployments into `deployment_metrics`, and another sweeps what is
 * past the retention. Only containers carrying this instance's label are read, as the reconciler judges only its own.
 */
export function createMetricsActivities(deps: {
  docker: Docker;
  metrics: Pick<MetricsStore, 'insert' | 'sweep'>;
  store: Pick<DeploymentStore, 'lifecycle'>;
  instance: string;
  retentionH: number;
  /** The edge router's per-host counters (usage), read on the same schedule and swept with the samples. */
  edge?: { sampler: Pick<EdgeSampler, 'sample'>; readings: Pick<EdgeReadings, 'sweep'> };
}) {
  const { docker } = deps;
  return {
    async sampleMetrics(): Promise<SampleReport> {
      // A router that does not answer costs its reading only, never the instances' samples.
      const edge = deps.edge?.sampler.sample().catch((err: unknown) => {
        Context.current().log.warn('the edge router counters were not read', { error: String(err) });
        return undefined;
      });
      const containers = await docker.listContainers({
        filters: {
          label: [`${LABELS.instance}=${deps.instance}`, LABELS.deploymentId],
          status: ['running'],
        },
      });
      const ids = [...new Set(containers.map((c) => c.Labels[LABELS.deploymentId]!))];
      // A destroyed deployment's containers are on their way out; nobody can read their history any more.
      const live = ids.length ? await deps.store.lifecycle(ids) : new Map<string, string>();
      const sampled = containers.filter((c) => live.get(c.Labels[LABELS.deploymentId]!) === 'live');
      const samples = await mapLimited(sampled, CONCURRENCY, async (c): Promise<MetricsSample | undefined> => {
        const stats = (await docker
          .getContainer(c.Id)
          .stats({ stream: false })
          .catch((err: unknown) => {
            // Stopped or removed since the listing: nothing to sample.
            if ([404, 409].includes((err as { statusCode?: number }).statusCode ?? 0)) return undefined;
            throw err;
          })) as unknown as EngineStats | undefined;
        // A container that stopped between the listing and the read answers with empty stats.
        if (!stats?.read || stats.read.startsWith('0001-')) return undefined;
        const m = metricsFrom(stats);
        return {
          deploymentId: c.Labels[LABELS.deploymentId]!,
          orgId: c.Labels[LABELS.orgId] ?? '',
          instance: (c.Names[0] ?? c.Id).replace(/^\//, ''),
          revision: Number(c.Labels[LABELS.revision] ?? 0),
          replica: Number(c.Labels[LABELS.replica] ?? 0),
          at: new Date(m.at),
          cpuPercent: m.cpuPercent,
          memoryBytes: m.memoryBytes,
          memoryLimitBytes: m.memoryLimitBytes,
          networkRxBytes: m.networkRxBytes,
          networkTxBytes: m.networkTxBytes,
          blockReadBytes: m.blockReadBytes,
          blockWriteBytes: m.blockWriteBytes,
          pids: m.pids,
        };
      });
      const recorded = samples.filter((s) => s !== undefined);
      await deps.metrics.insert(recorded);
      const hosts = await edge;
      return {
        deployments: new Set(recorded.map((s) => s.deploymentId)).size,
        instances: recorded.length,
        ...(hosts === undefined ? {} : { hosts }),
      };
    },

    /** The embedded store has no TTL index: samples past METRICS_RETENTION_H are deleted here. */
    async sweepMetrics(): Promise<SweepReport> {
      const before = new Date(Date.now() - deps.retentionH * 3600 * 1000);
      const removed = await deps.metrics.sweep(before);
      return { removed: removed + ((await deps.edge?.readings.sweep(before)) ?? 0) };
    },
  };
}

export type MetricsActivities = ReturnType<typeof createMetricsActivities>;
