import type Docker from 'dockerode';

import { LABELS } from '../constants';
import { ignore } from '../ignore';
import type { ProviderLogLine } from './observe';

/**
 * A deployment's instances' output as they write it, read from the engine's own log stream (`follow`), so a line
 * reaches a follower as soon as the engine stored it, with nothing polled. Read-only, like the rest of this folder.
 */

/** A line with its engine time in nanoseconds since the epoch: what a follower's cursor is made of. */
export interface FollowedLine extends ProviderLogLine {
  ns: bigint;
}

/**
 * Where a follower of the instances' output is: every line before `ns` was handed over, and the first `n` lines at
 * exactly `ns` (lines of one instance can share a time when the engine read them in one go).
 */
export interface AppCursor {
  ns: bigint;
  n: number;
}

/** The cursor after `line` was handed over; a line older than the cursor (a late one) leaves it where it is. */
export function advanceApp(c: AppCursor, line: { ns: bigint }): AppCursor {
  if (line.ns > c.ns) return { ns: line.ns, n: 1 };
  if (line.ns === c.ns) return { ns: c.ns, n: c.n + 1 };
  return c;
}

const ENGINE_TIME = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/;

/** An engine timestamp (RFC 3339 with up to nine fraction digits) as nanoseconds; undefined if it is none. */
export function engineNs(ts: string): bigint | undefined {
  const m = ENGINE_TIME.exec(ts);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (!Number.isFinite(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

export const nowNs = () => BigInt(Date.now()) * 1_000_000n;

/** The engine's `since`: seconds with nine fraction digits, which it compares at full precision. */
const sinceParam = (ns: bigint) => `${ns / 1_000_000_000n}.${String(ns % 1_000_000_000n).padStart(9, '0')}`;

/**
 * Lines from one multiplexed log stream (no TTY: an 8-byte header per frame, 1 stdout, 2 stderr, then the frame).
 * With `timestamps`, the engine writes each message as its own frame, `<time> <text>\n`.
 */
function frameReader(onLine: (stream: 'stdout' | 'stderr', timestamp: string, message: string) => void) {
  let pending: Buffer = Buffer.alloc(0);
  return (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    while (pending.length >= 8) {
      const size = pending.readUInt32BE(4);
      if (pending.length < 8 + size) break;
      const stream = pending[0] === 2 ? 'stderr' : 'stdout';
      const text = pending.subarray(8, 8 + size).toString('utf8');
      pending = pending.subarray(8 + size);
      let timestamp = '';
      for (const raw of text.split('\n')) {
        if (!raw) continue;
        const space = raw.indexOf(' ');
        const ts = space > 0 ? raw.slice(0, space) : '';
        // A frame holding more than one line: the lines after the first carry no time of their own.
        if (engineNs(ts) !== undefined) {
          timestamp = ts;
          onLine(stream, ts, raw.slice(space + 1));
        } else if (timestamp) onLine(stream, timestamp, raw);
      }
    }
  };
}

/**
 * Follows one container's output from `sinceNs` until the container stops (the engine then ends the stream) or
 * `signal` aborts. Resolves when it ended; rejects on an engine failure.
 */
export async function followContainer(
  docker: Docker,
  containerId: string,
  opts: { sinceNs: bigint; instance: string; signal: AbortSignal },
  onLine: (line: FollowedLine) => void,
): Promise<void> {
  if (opts.signal.aborted) return;
  const stream = (await docker.getContainer(containerId).logs({
    follow: true,
    stdout: true,
    stderr: true,
    timestamps: true,
    since: sinceParam(opts.sinceNs),
  })) as unknown as NodeJS.ReadableStream & { destroy(): void };
  const read = frameReader((s, timestamp, message) => {
    const ns = engineNs(timestamp)!;
    if (ns >= opts.sinceNs) onLine({ ns, timestamp, stream: s, message, instance: opts.instance });
  });
  const stop = () => stream.destroy();
  opts.signal.addEventListener('abort', stop, { once: true });
  try {
    await new Promise<void>((resolve, reject) => {
      stream.on('data', (chunk: Buffer) => read(chunk));
      stream.on('end', resolve);
      stream.on('close', resolve);
      stream.on('error', (err: Error) => (opts.signal.aborted ? resolve() : reject(err)));
    });
  } finally {
    opts.signal.removeEventListener('abort', stop);
  }
}

/**
 * How long a line waits for lines of other instances that the engine stored before it but that reached us after it:
 * lines are handed over in engine time order within this window, so a cursor (the newest time handed over) stays
 * exact across instances. A line later than this still comes, out of order.
 */
const MERGE_MS = 100;

/**
 * Every instance of the deployment, followed from `from` on: the ones there now and each one the engine starts
 * later (a new release, a replica, a restart), found by its labels through the engine's event stream, so a new
 * release's output follows within the same window as a running one's. Lines come in engine time order (see
 * MERGE_MS), each once, after `from`. Resolves when `signal` aborts; rejects when the engine fails.
 */
export async function followDeploymentOutput(
  docker: Docker,
  deploymentId: string,
  opts: { from: AppCursor; signal: AbortSignal; mergeMs?: number },
  onLine: (line: FollowedLine) => void,
): Promise<void> {
  const { signal } = opts;
  const mergeMs = opts.mergeMs ?? MERGE_MS;
  let skipAtFrom = opts.from.n;
  /** Per container: followed now, and the newest line time read from it (a restart reads on from there). */
  const followed = new Map<string, { active: boolean; again: boolean; lastNs: bigint }>();
  let fail: (err: unknown) => void = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => {
    fail = (err) => reject(err as Error);
  });
  failed.catch(ignore('awaited below in the race with the abort'));

  let held: FollowedLine[] = [];
  let flushTimer: NodeJS.Timeout | undefined;
  const flush = () => {
    flushTimer = undefined;
    const lines = held.sort((a, b) => (a.ns < b.ns ? -1 : a.ns > b.ns ? 1 : 0));
    held = [];
    for (const line of lines) {
      if (line.ns < opts.from.ns) continue;
      if (line.ns === opts.from.ns && skipAtFrom > 0) {
        skipAtFrom--;
        continue;
      }
      onLine(line);
    }
  };
  const hold = (line: FollowedLine) => {
    held.push(line);
    flushTimer ??= setTimeout(flush, mergeMs);
  };

  const attach = (id: string, name: string) => {
    if (signal.aborted) return;
    const known = followed.get(id);
    if (known?.active) {
      // A start seen before the end of the stream it restarts: follow it again once that ends.
      known.again = true;
      return;
    }
    const state = known ?? { active: true, again: false, lastNs: -1n };
    state.active = true;
    state.again = false;
    followed.set(id, state);
    // The first time from the follower's start; after a restart, from just after the last line read.
    const sinceNs = state.lastNs >= opts.from.ns ? state.lastNs + 1n : opts.from.ns;
    followContainer(docker, id, { sinceNs, instance: name, signal }, (line) => {
      if (line.ns > state.lastNs) state.lastNs = line.ns;
      hold(line);
    }).then(
      () => {
        state.active = false;
        if (state.again) attach(id, name);
      },
      (err: unknown) => {
        state.active = false;
        // Removed while we attached: it has nothing more to say.
        if ((err as { statusCode?: number }).statusCode === 404) return;
        fail(err);
      },
    );
  };

  if (signal.aborted) return;
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<void>((resolve) => (onAbort = () => resolve()));
  // The event stream first, then the listing: an instance started in between is in one of them, perhaps both.
  const events = (await docker.getEvents({
    filters: { type: ['container'], event: ['start'], label: [`${LABELS.deploymentId}=${deploymentId}`] },
  })) as NodeJS.ReadableStream & { destroy(): void };
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    let partial = '';
    events.on('data', (chunk: Buffer) => {
      partial += chunk.toString('utf8');
      let nl: number;
      while ((nl = partial.indexOf('\n')) >= 0) {
        const line = partial.slice(0, nl).trim();
        partial = partial.slice(nl + 1);
        if (!line) continue;
        let e: { id?: string; Actor?: { ID?: string; Attributes?: Record<string, string> } };
        try {
          e = JSON.parse(line) as typeof e;
        } catch (err) {
          // Not the engine's event stream as we know it: follow again from scratch rather than guess.
          fail(err);
          return;
        }
        const id = e.Actor?.ID ?? e.id;
        if (id) attach(id, e.Actor?.Attributes?.name ?? id.slice(0, 12));
      }
    });
    events.on('error', (err: Error) => {
      if (!signal.aborted) fail(err);
    });
    events.on('end', () => {
      if (!signal.aborted) fail(new Error('the engine ended its event stream'));
    });
    const listed = await docker.listContainers({
      all: true,
      filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] },
    });
    for (const c of listed) attach(c.Id, (c.Names[0] ?? c.Id).replace(/^\//, ''));
    await Promise.race([failed, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
    events.destroy();
    clearTimeout(flushTimer);
  }
}
