import { paceOf } from '@cli/api';
import { logCursor } from '@cli/cursor';
import { timeline } from '@cli/timeline';
import type { LogLine, StatusEvent } from '@cli/view';

const status = (s: string, at: string): StatusEvent => ({ status: s, message: s, at });
const line = (message: string, timestamp: string, stream = 'build'): LogLine => ({ timestamp, stream, message });

describe('timeline: status changes and log lines printed in the order they happened', () => {
  afterEach(() => jest.useRealTimers());

  function recorder() {
    const printed: string[] = [];
    const t = timeline({ status: (e) => printed.push(`status ${e.status}`), log: (l) => printed.push(l.message) });
    return { printed, t };
  }

  it('prints the last build lines before the status change that arrived ahead of them', () => {
    const { printed, t } = recorder();
    t.status(status('building', '2026-01-01T00:00:00.000Z'));
    t.logs([line('step 1', '2026-01-01T00:00:01.000Z')]);
    // The stream's wake-up: the change first, then the lines written just before it.
    t.status(status('deploying', '2026-01-01T00:00:05.000Z'));
    t.logs([line('step 2', '2026-01-01T00:00:04.900Z'), line('step 3', '2026-01-01T00:00:04.900Z')]);
    expect(printed).toEqual(['status building', 'step 1', 'step 2', 'step 3']);
    t.logs([line('started', '2026-01-01T00:00:06.000Z', 'system')]);
    expect(printed).toEqual(['status building', 'step 1', 'step 2', 'step 3', 'status deploying', 'started']);
  });

  it('lets a held status change out once no earlier line came for a while, or at the end', () => {
    jest.useFakeTimers();
    const { printed, t } = recorder();
    t.status(status('queued', '2026-01-01T00:00:00.000Z'));
    expect(printed).toEqual([]);
    jest.advanceTimersByTime(2000);
    expect(printed).toEqual(['status queued']);
    t.status(status('running', '2026-01-01T00:00:09.000Z'));
    t.flush();
    expect(printed).toEqual(['status queued', 'status running']);
  });
});

describe('logCursor: following GET …/logs?since= (inclusive) shows every line once, in time order', () => {
  it('skips what an overlapping read repeats, and keeps new lines of the same millisecond', () => {
    const c = logCursor();
    expect(c.since).toBeUndefined();
    const batch = '2026-01-01T00:00:01.000Z';
    expect(c.fresh([line('a', batch), line('b', batch)]).map((l) => l.message)).toEqual(['a', 'b']);
    expect(c.since).toBe(batch);
    // The next read starts at that millisecond: a and b again, then c written in the same millisecond, and d.
    const again = [line('a', batch), line('b', batch), line('c', batch), line('d', '2026-01-01T00:00:02.000Z')];
    expect(c.fresh(again).map((l) => l.message)).toEqual(['c', 'd']);
    expect(c.fresh(again.slice(3)).map((l) => l.message)).toEqual([]);
  });

  it('counts identical lines: a second "." in the same millisecond is a new line', () => {
    const c = logCursor();
    const at = '2026-01-01T00:00:01.000Z';
    expect(c.fresh([line('.', at, 'stdout')])).toHaveLength(1);
    expect(c.fresh([line('.', at, 'stdout'), line('.', at, 'stdout')])).toHaveLength(1);
    expect(c.fresh([line('.', at, 'stdout'), line('.', at, 'stdout')])).toHaveLength(0);
  });

  it('orders by time, not by text: the engine writes .1Z for 100 ms, which sorts after .15Z as a string', () => {
    const c = logCursor();
    const fresh = c.fresh([
      line('second', '2026-01-01T00:00:00.15Z', 'stdout'),
      line('first', '2026-01-01T00:00:00.1Z'),
    ]);
    expect(fresh.map((l) => l.message)).toEqual(['first', 'second']);
  });

  it('tells a full page that starts after the cursor (lines may be missing) from one that reaches back to it', () => {
    const c = logCursor();
    c.fresh([line('a', '2026-01-01T00:00:01.000Z')]);
    const page = [line('x', '2026-01-01T00:00:03.000Z'), line('y', '2026-01-01T00:00:04.000Z')];
    expect(c.gapBefore(page, 2)).toBe(true);
    expect(c.gapBefore([line('a', '2026-01-01T00:00:01.000Z'), page[0]!], 2)).toBe(false);
    expect(c.gapBefore(page.slice(0, 1), 2)).toBe(false);
  });
});

describe('paceOf: reads spread over what is left of the budget', () => {
  const headers = (remaining: number, resetS: number) =>
    new Headers({ 'x-ratelimit-remaining': String(remaining), 'x-ratelimit-reset': String(resetS) });

  it('spreads the remaining reads (less a reserve) over the time to the reset, never faster than the minimum', () => {
    const now = 1_000_000_000_000;
    // 90 reads left for 900 s, 10 kept back: one every 11.25 s.
    expect(paceOf(headers(90, now / 1000 + 900), 2000, now)).toBe(11_250);
    expect(paceOf(headers(100_000, now / 1000 + 900), 2000, now)).toBe(2000);
    // Only the reserve left: wait for the reset.
    expect(paceOf(headers(10, now / 1000 + 300), 2000, now)).toBe(300_000);
    expect(paceOf(new Headers(), 2000, now)).toBe(2000);
  });
});
