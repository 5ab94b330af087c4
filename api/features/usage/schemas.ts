import { z } from 'zod';

/** A UTC date, or an instant written in UTC (`Z`): usage is kept per UTC hour, so no other zone is taken. */
const DATE_OR_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?Z)?$/;

const bound = (which: string) =>
  z
    .string()
    .regex(
      DATE_OR_INSTANT,
      `${which} is a UTC date (2026-11-01) or a UTC instant ending in Z (2026-11-01T05:00:00Z); write other zones in UTC`,
    );

export const GROUP_BY = ['day', 'hour', 'project', 'deployment'] as const;

export const UsageQuery = z
  .object({
    from: bound('from').optional().meta({
      description:
        'Start of the period, included: a UTC date (its midnight) or instant, rounded down to the whole UTC hour. Default: the first day of the current UTC month',
      example: '2026-11-01',
    }),
    to: bound('to').optional().meta({
      description:
        'End of the period, excluded: a UTC date (its midnight) or instant, rounded up to the whole UTC hour. Default: the end of the current UTC hour (the month so far). At most 366 days after from',
      example: '2026-12-01',
    }),
    groupBy: z.enum(GROUP_BY, 'day, hour, project or deployment').default('day').meta({
      description:
        'How groups are cut: per UTC day, per UTC hour (a period of at most 31 days), per project (projectId null: the organisation’s own), or per deployment (deploymentId null: storage and AI tokens, which belong to no deployment)',
    }),
  })
  .strict();

const Figure = z
  .object({
    value: z.number().meta({ description: 'The amount over the period (rounded to 9 decimals)' }),
    unit: z.string(),
    limit: z.number().nullable().meta({
      description:
        "The plan's bound for the period in the same unit, where the plan has one (volume and database storage: the plan's GB allowed × the period's hours); null otherwise. Only in total",
    }),
  })
  .meta({ id: 'UsageFigure' });

export const UsageFigures = z
  .object({
    cpuSeconds: Figure.meta({ description: 'CPU time of the deployments’ instances, in seconds of one CPU' }),
    memoryGbHours: Figure.meta({ description: 'Memory the instances used, in GiB × hours' }),
    buildMinutes: Figure.meta({ description: 'Time deployments spent in status building, in minutes' }),
    requests: Figure.meta({ description: 'Requests the edge router answered for the deployments’ hosts' }),
    requestBytes: Figure.meta({ description: 'Bytes of those requests (request line, headers and body)' }),
    responseBytes: Figure.meta({ description: 'Bytes of the response bodies sent back' }),
    aiInputTokens: Figure.meta({ description: 'Input tokens of AI builder turns, as the provider counted them' }),
    aiOutputTokens: Figure.meta({ description: 'Output tokens of AI builder turns' }),
    volumeGbHours: Figure.meta({ description: 'Persistent volumes’ allocated size, in GiB × hours held' }),
    databaseGbHours: Figure.meta({ description: 'Databases’ allocated storage, in GiB × hours held' }),
    backupGbHours: Figure.meta({ description: 'Backups’ and snapshots’ objects, in GiB × hours kept' }),
    bucketGbHours: Figure.meta({ description: 'Buckets’ bytes as last measured, in GiB × hours' }),
  })
  .meta({ id: 'UsageFigures' });

export const UsageGroup = z
  .object({
    key: z.string().nullable().meta({
      description:
        'The day (YYYY-MM-DD, UTC), the hour (its start, e.g. 2026-11-01T05:00:00.000Z), the projectId or the deploymentId, by groupBy; null: no project, or no deployment',
    }),
    usage: UsageFigures,
  })
  .meta({ id: 'UsageGroup' });

export const Usage = z
  .object({
    from: z.string().meta({ description: 'Start of the period as counted (a whole UTC hour)' }),
    to: z.string().meta({ description: 'End of the period as counted, excluded (a whole UTC hour)' }),
    groupBy: z.enum(GROUP_BY),
    plan: z.string(),
    total: UsageFigures,
    groups: z.array(UsageGroup).meta({ description: 'Groups with any usage, ordered by key (null last)' }),
    hours: z
      .object({
        rolledUp: z.number().int().meta({ description: 'Hours answered from their immutable usage records' }),
        live: z.number().int().meta({
          description:
            'Hours not yet rolled up, answered from the raw records (the current hour, and the last closed one for a few minutes)',
        }),
      })
      .meta({ description: 'Where the hourly figures came from' }),
  })
  .meta({ id: 'Usage' });

export type UsageQuery = z.infer<typeof UsageQuery>;
export type UsageFigures = z.infer<typeof UsageFigures>;
export type Usage = z.infer<typeof Usage>;
