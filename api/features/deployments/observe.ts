import type Docker from 'dockerode';

import type { Config } from '@shared/config';
import type { LogStore } from '@shared/deployments/logs-store';
import type { MetricsStore } from '@shared/deployments/metrics-store';
import { RECENT_RELEASES } from '@shared/deployments/read-model';
import type { ReleasesSummary, ReleaseStore } from '@shared/deployments/releases-store';
import type { DeploymentRecord } from '@shared/deployments/types';
import { instanceNameOf, selectInstances } from '@shared/engine/instances';
import {
  type DeploymentHealth,
  deploymentHealth,
  deploymentLogs,
  deploymentMetrics,
  type LogQuery,
  type ProviderLogLine,
} from '@shared/engine/observe';
import { AppError } from '@shared/errors';

import { HISTORY_MAX_POINTS } from './schemas.observe';

export interface LogLineOut {
  timestamp: string;
  stream: 'stdout' | 'stderr' | 'build' | 'system';
  message: string;
  instance?: string;
}

/**
 * The read side of a deployment beyond its record: releases, health and resource use read from the engine now,
 * the worker's recorded samples, and logs from both places. Every method takes a record the caller already
 * fetched for the principal's organisation (service.get), so nothing here decides who may see what.
 */
export function createDeploymentObserver(deps: {
  docker: Docker;
  releases: Pick<ReleaseStore, 'list'>;
  metrics: Pick<MetricsStore, 'history'>;
  logs: Pick<LogStore, 'tail'>;
  config: Pick<Config, 'METRICS_SAMPLE_S' | 'METRICS_RETENTION_H'>;
  /** What only a cloud holds of its deployments: its app's output and its service's state (./cloud-reads.ts). */
  cloud?: {
    logs(d: DeploymentRecord, query: LogQuery): Promise<ProviderLogLine[]>;
    health(d: DeploymentRecord): Promise<DeploymentHealth>;
  };
}) {
  const { docker } = deps;
  return {
    async releasesSummary(d: DeploymentRecord): Promise<ReleasesSummary> {
      const { items, total } = await deps.releases.list(d._id, { limit: RECENT_RELEASES, offset: 0 });
      return { total, recent: items };
    },

    releases: (d: DeploymentRecord, q: { limit: number; offset: number }) => deps.releases.list(d._id, q),

    /** The serving release's instances (all of them while none is recorded yet, e.g. a first deploy). */
    health: (d: DeploymentRecord): Promise<DeploymentHealth> =>
      d.provider !== 'engine_local' && deps.cloud
        ? deps.cloud.health(d)
        : deploymentHealth(docker, d._id, { port: d.port, ...(d.instances?.length ? { revision: d.revision } : {}) }),

    /**
     * Every running instance, a release being started beside the serving one included. A cloud's instances are not
     * this engine's: none is sampled here (the clouds' own monitoring holds their use).
     */
    metrics: async (d: DeploymentRecord) => (d.provider !== 'engine_local' ? [] : deploymentMetrics(docker, d._id)),

    async history(d: DeploymentRecord, q: { from?: string; to?: string; step: number }) {
      const to = q.to ? new Date(q.to) : new Date();
      const from = q.from ? new Date(q.from) : new Date(to.getTime() - 3600_000);
      if (from >= to) throw new AppError('INVALID_REQUEST', '`from` must be before `to`.', { from, to });
      const points = Math.ceil((to.getTime() - from.getTime()) / (q.step * 1000));
      if (points > HISTORY_MAX_POINTS)
        throw new AppError(
          'INVALID_REQUEST',
          `That window at step ${q.step} s is ${points} points; at most ${HISTORY_MAX_POINTS}: raise step or shorten the window. Samples are kept ${deps.config.METRICS_RETENTION_H} h.`,
          { points, max: HISTORY_MAX_POINTS },
        );
      const series = await deps.metrics.history(d._id, { from, to, stepS: q.step });
      return {
        from: from.toISOString(),
        to: to.toISOString(),
        step: q.step,
        sampleEveryS: deps.config.METRICS_SAMPLE_S,
        series,
      };
    },

    /**
     * The last `limit` lines, oldest first: the platform's own (build, system) and the instances' output, merged
     * by time. `instance` keeps only that instance's output; it must be one of the deployment's instances.
     */
    async logs(
      d: DeploymentRecord,
      q: { limit: number; since?: Date; stream?: 'build' | 'system' | 'app'; instance?: string },
    ): Promise<LogLineOut[]> {
      const onCloud = d.provider !== 'engine_local';
      // A cloud names its own instances (task IDs, revisions): its log service filters by them.
      if (q.instance !== undefined && !onCloud) {
        const names = (await selectInstances(docker, d._id)).map((s) => instanceNameOf(s.info));
        if (!names.includes(q.instance))
          throw new AppError(
            'INVALID_REQUEST',
            `${q.instance} is not an instance of this deployment; GET /deployments/${d._id}/health lists them.`,
            { instance: q.instance },
          );
      }
      const platformStream = q.stream === 'build' || q.stream === 'system' ? q.stream : undefined;
      const platform =
        q.stream === 'app' || q.instance !== undefined
          ? []
          : await deps.logs.tail(d._id, q.limit, {
              ...(platformStream ? { stream: platformStream } : {}),
              ...(q.since ? { since: q.since } : {}),
            });
      const appQuery: LogQuery = {
        tail: q.limit,
        ...(q.since ? { since: Math.floor(q.since.getTime() / 1000) } : {}),
        ...(q.instance ? { instance: q.instance } : {}),
      };
      const app =
        q.stream === undefined || q.stream === 'app'
          ? onCloud
            ? ((await deps.cloud?.logs(d, appQuery)) ?? [])
            : await deploymentLogs(docker, d._id, appQuery)
          : [];
      // The engine's `since` has whole-second precision: drop what is before the asked instant.
      const kept = q.since ? app.filter((l) => Date.parse(l.timestamp) >= q.since!.getTime()) : app;
      return [...platform, ...kept].sort((a, b) => a.timestamp.localeCompare(b.timestamp)).slice(-q.limit);
    },
  };
}

export type DeploymentObserver = ReturnType<typeof createDeploymentObserver>;
