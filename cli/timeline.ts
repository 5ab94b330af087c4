import type { LogLine, StatusEvent } from './view';

/** Where the lines go once their order is known. */
export interface TimelineSink {
  status(e: StatusEvent): void;
  log(line: LogLine): void;
}

/**
 * How long a status change waits for log lines written before it. The event stream sends a wake-up's status changes
 * first and the log lines written up to then right after, from the same read, so they come well within this.
 */
export const STATUS_HOLD_MS = 2000;

/** A timestamp as milliseconds; one that cannot be read counts as "now" (after everything held). */
const msOf = (iso: string) => {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? Infinity : ms;
};

/**
 * Puts status changes and log lines back into the order they happened. Each kind arrives in its own order (the
 * stream's cursor guarantees that), but a status change can arrive before lines written just before it: the last
 * build lines, read after the change that ended the build. So a status change is held until a line written after it
 * arrives (lines written before it go out first), until `holdMs` passes without one, or until `flush()`.
 */
export function timeline(sink: TimelineSink, holdMs = STATUS_HOLD_MS) {
  const held: StatusEvent[] = [];
  let timer: NodeJS.Timeout | undefined;

  function release(until: number) {
    while (held.length && msOf(held[0]!.at) <= until) sink.status(held.shift()!);
    if (!held.length && timer) {
      clearTimeout(timer);
      timer = undefined;
    }
  }

  return {
    status(e: StatusEvent) {
      held.push(e);
      timer ??= setTimeout(() => {
        timer = undefined;
        release(Infinity);
      }, holdMs);
    },
    logs(lines: LogLine[]) {
      for (const l of lines) {
        release(msOf(l.timestamp));
        sink.log(l);
      }
    },
    /** Everything held goes out: the stream has ended, nothing earlier can come. */
    flush() {
      release(Infinity);
    },
  };
}
