import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { PLAN_POLICIES } from '@shared/plans';
import type { BucketUsageStore } from '@shared/usage/bucket-usage';
import { floorHour, HOUR_MS, type UsageRecord, type UsageRecords } from '@shared/usage/hourly';
import type { UsageSources } from '@shared/usage/sources';
import type { StorageLedger } from '@shared/usage/storage-ledger';
import { storedByteHours } from '@shared/usage/storage-usage';

import type { Usage, UsageQuery } from './schemas';
import { type Amounts, emptyAmounts, figuresOf } from './views';

/** A year and a day: a leap year's whole, and no more (each hour not rolled up is computed while answering). */
export const MAX_DAYS = 366;
/** Per-hour groups: a month's hours at most, so an answer stays a chart's worth (744 points) and is quick to cut. */
export const MAX_HOURLY_DAYS = 31;

function parseBound(text: string, which: 'from' | 'to'): number {
  const t = Date.parse(text.length === 10 ? `${text}T00:00:00Z` : text);
  // Date.parse rolls 2026-02-30 over into March: a date that does not read back the same is not a real one.
  if (!Number.isFinite(t) || new Date(t).toISOString().slice(0, 10) !== text.slice(0, 10))
    throw new AppError('INVALID_REQUEST', `${which} "${text}" is not a real date or instant; e.g. 2026-11-01.`, {
      field: which,
    });
  return t;
}

/** [from, to) in whole UTC hours, with the defaults and bounds the route documents. */
export function periodOf(q: Pick<UsageQuery, 'from' | 'to'>, now: number): { from: number; to: number } {
  const month = new Date(now);
  const from = floorHour(
    q.from ? parseBound(q.from, 'from') : Date.UTC(month.getUTCFullYear(), month.getUTCMonth(), 1),
  );
  const toRaw = q.to ? parseBound(q.to, 'to') : floorHour(now) + HOUR_MS;
  const to = Math.ceil(toRaw / HOUR_MS) * HOUR_MS;
  if (to <= from)
    throw new AppError(
      'INVALID_REQUEST',
      `from (${new Date(from).toISOString()}) must be before to (${new Date(to).toISOString()}), counted in whole UTC hours; ask for a later to or an earlier from.`,
      { from: new Date(from).toISOString(), to: new Date(to).toISOString() },
    );
  if (to - from > MAX_DAYS * 24 * HOUR_MS)
    throw new AppError(
      'INVALID_REQUEST',
      `The period from ${new Date(from).toISOString()} to ${new Date(to).toISOString()} is longer than ${MAX_DAYS} days; ask for a shorter one, e.g. a month at a time.`,
      { maxDays: MAX_DAYS },
    );
  return { from, to };
}

const dayOf = (t: number) => new Date(t).toISOString().slice(0, 10);
const hourOf = (t: number) => new Date(t).toISOString();

/**
 * Usage of the caller's organisation over a period (docs/architecture.md, "Usage"): the hourly records of hours rolled
 * up, the same computation over the raw records for hours not yet rolled up, and storage from the storage ledger and
 * the buckets' samples, which are kept for good.
 */
export function createUsageService(deps: {
  records: Pick<UsageRecords, 'between' | 'doneHours'>;
  sources: Pick<UsageSources, 'hour'>;
  ledger: Pick<StorageLedger, 'entriesOverlapping'>;
  buckets: Pick<BucketUsageStore, 'samplesBefore'>;
  /** Hours older than this have no raw records left to compute from. */
  retentionH: number;
}) {
  return {
    async usage(principal: Principal, q: UsageQuery, now = Date.now()): Promise<Usage> {
      const orgId = principal.org._id;
      const { from, to } = periodOf(q, now);
      if (q.groupBy === 'hour' && to - from > MAX_HOURLY_DAYS * 24 * HOUR_MS)
        throw new AppError(
          'INVALID_REQUEST',
          `groupBy=hour covers at most ${MAX_HOURLY_DAYS} days, and ${new Date(from).toISOString()} to ${new Date(to).toISOString()} is longer; ask for a shorter period or groupBy=day.`,
          { maxDays: MAX_HOURLY_DAYS },
        );
      const fromD = new Date(from);
      const toD = new Date(to);
      const [stored, done] = await Promise.all([
        deps.records.between(orgId, fromD, toD),
        deps.records.doneHours(fromD, toD),
      ]);
      const rows: UsageRecord[] = stored.filter((r) => done.has(r.hour.getTime()));
      // Hours with raw records left (within the retention, begun by now) and no roll-up yet.
      const oldestRaw = floorHour(now - deps.retentionH * HOUR_MS);
      let live = 0;
      for (let h = Math.max(from, oldestRaw); h < Math.min(to, now); h += HOUR_MS) {
        if (done.has(h)) continue;
        rows.push(...(await deps.sources.hour(new Date(h), orgId)));
        live++;
      }

      const keyOf = (r: { projectId: string | null; deploymentId: string | null }, t: number) =>
        q.groupBy === 'day'
          ? dayOf(t)
          : q.groupBy === 'hour'
            ? hourOf(t)
            : q.groupBy === 'project'
              ? r.projectId
              : r.deploymentId;
      const groups = new Map<string | null, Amounts>();
      const total = emptyAmounts();
      const amountsOf = (key: string | null) => {
        const a = groups.get(key) ?? emptyAmounts();
        groups.set(key, a);
        return a;
      };
      for (const r of rows) {
        total[r.metric] += r.value;
        amountsOf(keyOf(r, r.hour.getTime()))[r.metric] += r.value;
      }

      const [ledger, samples] = await Promise.all([
        deps.ledger.entriesOverlapping(orgId, fromD, toD),
        deps.buckets.samplesBefore(orgId, toD),
      ]);
      const storageKey = {
        volume: 'volumeByteHours',
        database: 'databaseByteHours',
        backup: 'backupByteHours',
        bucket: 'bucketByteHours',
      } as const;
      const addStorage = (windowFrom: number, windowTo: number, group: (p: string | null) => string | null) => {
        for (const s of storedByteHours(ledger, samples, new Date(windowFrom), new Date(windowTo))) {
          amountsOf(group(s.projectId))[storageKey[s.kind]] += s.byteHours;
        }
      };
      for (const s of storedByteHours(ledger, samples, fromD, toD)) total[storageKey[s.kind]] += s.byteHours;
      if (q.groupBy === 'day') {
        for (let d = from; d < to;) {
          const next = Math.min(
            Date.UTC(new Date(d).getUTCFullYear(), new Date(d).getUTCMonth(), new Date(d).getUTCDate() + 1),
            to,
          );
          addStorage(d, next, () => dayOf(d));
          d = next;
        }
      } else if (q.groupBy === 'hour') {
        for (let h = from; h < to; h += HOUR_MS) addStorage(h, h + HOUR_MS, () => hourOf(h));
      } else addStorage(from, to, (p) => (q.groupBy === 'project' ? p : null));

      const policy = PLAN_POLICIES[principal.org.plan];
      const hours = (to - from) / HOUR_MS;
      const limits = {
        volumeGbHours: policy.volumes.maxTotalGb * hours,
        databaseGbHours: policy.databases.maxTotalGb * hours,
      };
      const sorted = [...groups.entries()]
        .filter(([, a]) => Object.values(a).some((v) => v !== 0))
        .sort(([a], [b]) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1));
      return {
        from: fromD.toISOString(),
        to: toD.toISOString(),
        groupBy: q.groupBy,
        plan: principal.org.plan,
        total: figuresOf(total, limits),
        groups: sorted.map(([key, a]) => ({ key, usage: figuresOf(a, {}) })),
        hours: { rolledUp: done.size, live },
      };
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
