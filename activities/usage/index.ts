import { Context } from '@temporalio/activity';

import type { RollupReport } from '@shared/contracts/usage';
import { floorHour, HOUR_MS, type UsageRecords } from '@shared/usage/hourly';
import type { UsageSources } from '@shared/usage/sources';

/** Hours one run does at most: a worker back after a long stop catches up over a few runs. */
const HOURS_PER_RUN = 48;

/**
 * An hour is rolled up once every sample of it is in: a sample is stored when its run ends, up to the sampling
 * activity's minute after the engine's time it carries, so a closed hour waits this long.
 */
export const ROLLUP_GRACE_MS = 5 * 60_000;

/**
 * The usage roll-up (docs/architecture.md, "Usage"): every closed hour still within the metrics retention and not yet
 * marked done is computed from its raw records and written as immutable records. An hour past the retention is left
 * alone, whole or not: its samples may already be partly swept, and a figure made from part of them would be wrong
 * for good.
 */
export function createUsageActivities(deps: {
  records: Pick<UsageRecords, 'write' | 'doneHours'>;
  sources: Pick<UsageSources, 'hour'>;
  retentionH: number;
  sampleEveryS: number;
}) {
  return {
    async rollUpUsage(now = Date.now()): Promise<RollupReport> {
      const grace = ROLLUP_GRACE_MS + deps.sampleEveryS * 1000;
      const first = floorHour(now - deps.retentionH * HOUR_MS) + HOUR_MS;
      const end = floorHour(now - grace);
      const done = await deps.records.doneHours(new Date(first), new Date(end));
      const report: RollupReport = { hours: [], records: 0 };
      for (let h = first; h < end && report.hours.length < HOURS_PER_RUN; h += HOUR_MS) {
        if (done.has(h)) continue;
        const hour = new Date(h);
        const rows = await deps.sources.hour(hour);
        await deps.records.write(hour, rows);
        report.hours.push(hour.toISOString());
        report.records += rows.length;
        Context.current().heartbeat(hour.toISOString());
      }
      return report;
    },
  };
}

export type UsageActivities = ReturnType<typeof createUsageActivities>;
