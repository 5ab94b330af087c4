import { z } from 'zod';

import { queryInt } from '../../http/fields';
import { LogsQuery } from './schemas';
import { Deployment } from './schemas.responses';

/**
 * What the platform API lets a caller observe of a running deployment (routes.platform.ts): its logs, health, and
 * resource use now and over time.
 */

const INSTANCE_NAME = /^slipway-[0-9a-f-]{36}-r\d{1,9}(-\d{1,4})?$/;

/** Unix seconds, or an ISO 8601 time with its zone as zod checks one (real dates only), stated whole as a pattern. */
const SINCE = new RegExp(`^(?:\\d{1,11}|${z.regexes.datetime({ offset: true }).source.slice(1, -1)})$`);

export const PlatformLogsQuery = LogsQuery.extend({
  since: z
    .string()
    .max(40)
    .regex(SINCE, 'an ISO 8601 time with its zone (2026-11-23T14:00:00Z) or Unix seconds')
    .optional()
    .meta({ description: 'Only lines at or after this time: ISO 8601, or Unix seconds' }),
  stream: z.enum(['build', 'system', 'app']).optional().meta({
    description: "build: the build's output; system: Slipway's notices; app: the instances' stdout and stderr",
  }),
  instance: z
    .string()
    .regex(INSTANCE_NAME, 'an instance name as GET /deployments/{id}/health lists it')
    .optional()
    .meta({ description: "Only this instance's output (see instances[].name); build and system lines are left out" }),
});

/** `since`, once SINCE has admitted it, as a time. */
export const sinceDate = (v: string): Date => new Date(/^\d{1,11}$/.test(v) ? Number(v) * 1000 : Date.parse(v));

/** Most buckets one history answer holds; a finer step needs a shorter window. */
export const HISTORY_MAX_POINTS = 1440;

export const HistoryQuery = z
  .object({
    from: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Start of the window; an hour before `to` when absent' }),
    to: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'End of the window (exclusive); now when absent' }),
    step: queryInt(1, 86_400)
      .default(60)
      .meta({
        description: `Seconds per point: the samples in each step are averaged (at most ${HISTORY_MAX_POINTS} points)`,
      }),
  })
  .strict();

// Responses

const Probe = z.object({
  ok: z.boolean(),
  status: z.number().int().optional(),
  latencyMs: z.number().optional(),
  error: z.string().optional(),
  at: z.iso.datetime(),
});

const InstanceState = z.enum(['created', 'running', 'restarting', 'paused', 'exited', 'dead', 'removing']);

export const Health = z
  .object({
    deploymentId: z.uuid(),
    status: Deployment.shape.status,
    overall: z.enum(['healthy', 'degraded', 'unhealthy', 'stopped']).meta({
      description:
        'healthy: every instance runs and answers; degraded: some do; unhealthy: none does while some should; stopped: none is meant to run',
    }),
    instances: z.array(
      z.object({
        name: z.string(),
        revision: z.number().int(),
        replica: z.number().int(),
        state: InstanceState,
        restarts: z.number().int(),
        startedAt: z.iso.datetime().optional(),
        exitCode: z.number().int().optional(),
        oomKilled: z.boolean(),
        probe: Probe.meta({ description: 'An HTTP GET / to the port just now; any answer below 500 is ok' }),
      }),
    ),
    at: z.iso.datetime(),
  })
  .meta({ id: 'DeploymentHealth' });

const Numbers = {
  cpuPercent: z.number().meta({ description: 'Percent of one CPU (200 = two CPUs), as docker stats shows it' }),
  memoryBytes: z.number().meta({ description: 'Memory used, without the page cache' }),
  memoryLimitBytes: z.number(),
  networkRxBytes: z.number(),
  networkTxBytes: z.number(),
  blockReadBytes: z.number(),
  blockWriteBytes: z.number(),
  pids: z.number(),
};

export const ContainerMetrics = z
  .object({
    deploymentId: z.uuid(),
    instances: z.array(
      z.object({
        name: z.string(),
        revision: z.number().int(),
        replica: z.number().int(),
        ...Numbers,
        onlineCpus: z.number().int(),
        memoryPercent: z.number(),
        at: z.iso.datetime(),
      }),
    ),
  })
  .meta({ id: 'ContainerMetrics' });

export const MetricsHistory = z
  .object({
    deploymentId: z.uuid(),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    step: z.number().int(),
    sampleEveryS: z.number().int().meta({ description: 'How often the worker records a sample' }),
    series: z.array(
      z.object({
        instance: z.string(),
        revision: z.number().int(),
        replica: z.number().int(),
        points: z.array(z.object({ at: z.iso.datetime(), samples: z.number().int(), ...Numbers })),
      }),
    ),
  })
  .meta({ id: 'ContainerMetricsHistory' });

export const PlatformLogs = z
  .object({
    deploymentId: z.uuid(),
    lines: z.array(
      z.object({
        timestamp: z.string(),
        stream: z.enum(['stdout', 'stderr', 'build', 'system']),
        message: z.string(),
        instance: z.string().optional().meta({ description: 'The instance an app line came from' }),
      }),
    ),
  })
  .meta({ id: 'PlatformLogs' });
