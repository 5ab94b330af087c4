import type { UsageMetric } from '@shared/usage/hourly';

import type { UsageFigures } from './schemas';

const GIB = 1024 ** 3;

/** What a period's records add up to, in the records' own units. */
export type Amounts = Record<
  UsageMetric | 'volumeByteHours' | 'databaseByteHours' | 'backupByteHours' | 'bucketByteHours',
  number
>;

export const emptyAmounts = (): Amounts => ({
  cpuSeconds: 0,
  memoryByteHours: 0,
  buildSeconds: 0,
  requests: 0,
  requestBytes: 0,
  responseBytes: 0,
  aiInputTokens: 0,
  aiOutputTokens: 0,
  volumeByteHours: 0,
  databaseByteHours: 0,
  backupByteHours: 0,
  bucketByteHours: 0,
});

/** Nine decimals: a small instance for a few seconds is a few millionths of a GiB-hour. */
const round = (v: number) => Math.round(v * 1e9) / 1e9;

/** The figures a client reads: its units, rounded, beside the plan's limit where one is given. */
export function figuresOf(a: Amounts, limits: Partial<Record<keyof UsageFigures, number>>): UsageFigures {
  const f = (value: number, unit: string, key: keyof UsageFigures) => ({
    value: round(value),
    unit,
    limit: limits[key] ?? null,
  });
  return {
    cpuSeconds: f(a.cpuSeconds, 'cpu-seconds', 'cpuSeconds'),
    memoryGbHours: f(a.memoryByteHours / GIB, 'GiB-hours', 'memoryGbHours'),
    buildMinutes: f(a.buildSeconds / 60, 'minutes', 'buildMinutes'),
    requests: f(a.requests, 'requests', 'requests'),
    requestBytes: f(a.requestBytes, 'bytes', 'requestBytes'),
    responseBytes: f(a.responseBytes, 'bytes', 'responseBytes'),
    aiInputTokens: f(a.aiInputTokens, 'tokens', 'aiInputTokens'),
    aiOutputTokens: f(a.aiOutputTokens, 'tokens', 'aiOutputTokens'),
    volumeGbHours: f(a.volumeByteHours / GIB, 'GiB-hours', 'volumeGbHours'),
    databaseGbHours: f(a.databaseByteHours / GIB, 'GiB-hours', 'databaseGbHours'),
    backupGbHours: f(a.backupByteHours / GIB, 'GiB-hours', 'backupGbHours'),
    bucketGbHours: f(a.bucketByteHours / GIB, 'GiB-hours', 'bucketGbHours'),
  };
}
