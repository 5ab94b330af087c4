import { logKey, type LogLine } from './view';

const msOf = (iso: string) => {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? -Infinity : ms;
};

/**
 * Where a follower of `GET /platform/deployments/{id}/logs?since=…` is: the newest millisecond it has shown, and
 * which lines of that millisecond (the server's `since` is inclusive, and a build writes many lines at one instant).
 * Each read then yields only what was not shown before, in time order, however the reads overlap.
 */
export function logCursor() {
  let at = -Infinity;
  /** Lines shown at `at`, counted: two identical lines in one millisecond are two lines. */
  let shownAt = new Map<string, number>();
  return {
    /** The `since` of the next read; none before the first line. */
    get since(): string | undefined {
      return Number.isFinite(at) ? new Date(at).toISOString() : undefined;
    },
    /** True when a full page began after the cursor: lines between the two reads may have been left out. */
    gapBefore(lines: LogLine[], page: number): boolean {
      return Number.isFinite(at) && lines.length >= page && Math.min(...lines.map((l) => msOf(l.timestamp))) > at;
    },
    fresh(lines: LogLine[]): LogLine[] {
      // By time, not by the server's string order: the engine trims trailing zeros (.1Z is after .15Z as text).
      const sorted = lines.map((l, i) => ({ l, i, ms: msOf(l.timestamp) })).sort((a, b) => a.ms - b.ms || a.i - b.i);
      const repeat = new Map(shownAt);
      const out: LogLine[] = [];
      for (const { l, ms } of sorted) {
        if (ms < at) continue;
        const key = logKey(l);
        if (ms === at) {
          const left = repeat.get(key) ?? 0;
          if (left > 0) {
            repeat.set(key, left - 1);
            continue;
          }
        } else {
          at = ms;
          shownAt = new Map();
          repeat.clear();
        }
        shownAt.set(key, (shownAt.get(key) ?? 0) + 1);
        out.push(l);
      }
      return out;
    },
  };
}
