import type { Client } from '@temporalio/client';
import type Docker from 'dockerode';

import type { LogStore } from '@shared/deployments/logs-store';
import type { StatusFeed } from '@shared/deployments/status-feed';
import type { DeploymentRecord } from '@shared/deployments/types';
import { advanceApp, followDeploymentOutput, nowNs } from '@shared/engine/follow';
import type { Principal } from '@shared/identity/service';
import type { Logger } from '@shared/logger';

import { type CommandEvent, followCommands } from './command-progress';
import { encodeCursor, type EventCursor } from './event-cursor';
import type { LogLineOut } from './observe';
import { SETTLED, sharedRecord } from './wait';

export type FollowEvent =
  | { type: 'status'; id: string; data: { status: string; message: string; at: string } }
  /** A platform line (build, system) or, with `instance`, a line an instance wrote (stdout, stderr). */
  | { type: 'log'; id: string; data: LogLineOut }
  | { type: 'command'; id: string; data: CommandEvent }
  /** The deployment is running, stopped or failed, and everything before it was sent; the stream goes on. */
  | { type: 'settled'; id: string; data: { status: string } }
  /** The deployment was destroyed while followed; `end` follows, then the stream closes. */
  | { type: 'destroyed'; id: string; data: { deploymentId: string } }
  | { type: 'end'; id: string; data: { reason: 'destroyed' } };

/** What one source hands over: the event and where that source is after it. */
type Item = {
  [T in FollowEvent['type']]: { type: T; data: Extract<FollowEvent, { type: T }>['data'] };
}[FollowEvent['type']] & {
  at: Partial<EventCursor>;
};

/** Which sources a follower reads: all of them by default; MCP's log follow reads only the lines. */
export interface FollowOptions {
  status?: boolean;
  commands?: boolean;
  app?: boolean;
  /** Bytes of events that may wait for the consumer before it is let go (SlowFollower). */
  maxBuffered?: number;
}

const LOG_PAGE = 200;
/** How long a new stream waits for the commands' history before it may say `settled` on the status alone. */
const COMMANDS_WAIT_MS = 3000;
const MAX_BUFFERED = 1024 * 1024;
/** After a source failed (the engine or Temporal unreachable), how soon it is followed again from where it was. */
const RETRY_MS = 2000;

/** The follower's client took less than the follower had for it, for longer than it may: it is let go. */
export class SlowFollower extends Error {
  override name = 'SlowFollower';
}

/** A rough size of an item as the stream will write it: what the buffer cap counts. */
const sizeOf = (item: Item) => JSON.stringify(item.data).length + 96;

/**
 * Items from several producers, handed to one consumer in the order they came; a failure ends it. A source that can
 * wait (history, read in pages) waits for `room`; one that cannot (the app's output, commands: they come as they
 * happen) fails it with SlowFollower once more than `limit` bytes of its items wait for the consumer (its client).
 */
function channel(limit: number, signal: AbortSignal) {
  const items: { item: Item; size: number; live: boolean }[] = [];
  let bytes = 0;
  let liveBytes = 0;
  let wake: (() => void) | undefined;
  const roomWaiters = new Set<() => void>();
  let failure: { err: unknown } | undefined;
  const poke = () => {
    wake?.();
    for (const w of roomWaiters) w();
  };
  signal.addEventListener('abort', poke, { once: true });
  return {
    push(item: Item, live = false) {
      const size = sizeOf(item);
      items.push({ item, size, live });
      bytes += size;
      if (live) liveBytes += size;
      if (liveBytes > limit) failure ??= { err: new SlowFollower(`more than ${limit} bytes of events waited`) };
      wake?.();
    },
    fail(err: unknown) {
      failure ??= { err };
      poke();
    },
    /** Resolves once at most half the limit waits (or the follow is over). */
    async room(): Promise<void> {
      while (bytes > limit / 2 && !failure && !signal.aborted)
        await new Promise<void>((resolve) => {
          const done = () => {
            roomWaiters.delete(done);
            resolve();
          };
          roomWaiters.add(done);
        });
    },
    async *drain(): AsyncGenerator<Item> {
      for (;;) {
        if (failure) throw failure.err;
        const next = items.shift();
        if (next) {
          bytes -= next.size;
          if (next.live) liveBytes -= next.size;
          if (bytes <= limit / 2) for (const w of roomWaiters) w();
          yield next.item;
          continue;
        }
        if (signal.aborted) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    },
  };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * A deployment as it happens, from a cursor on, until the client leaves or the deployment is destroyed: its status
 * changes, its commands' progress, the platform's log lines (build, system) and its instances' output. Status and
 * platform lines are read only when woken (the worker's announcements, the api's destroy, the feed's slow recheck),
 * shared with every follower of the deployment in this process; commands follow the workflow's history and output
 * follows the engine's log stream, each as it grows, so nothing here polls.
 */
export function createDeploymentFollower(deps: {
  feed: Pick<StatusFeed, 'watch'>;
  get: (principal: Principal, id: string) => Promise<DeploymentRecord>;
  logs: Pick<LogStore, 'after'>;
  docker?: Docker;
  temporal?: Client;
  log?: Pick<Logger, 'warn'>;
}) {
  return async function* follow(
    principal: Principal,
    id: string,
    from: EventCursor,
    signal: AbortSignal,
    opts: FollowOptions = {},
  ): AsyncGenerator<FollowEvent> {
    const stop = new AbortController();
    const abort = () => stop.abort();
    signal.addEventListener('abort', abort, { once: true });
    const cur: EventCursor = { ...from, appNs: from.appNs || nowNs() };
    const queue = channel(opts.maxBuffered ?? MAX_BUFFERED, stop.signal);
    // Subscribed before the first read: a destroy before it is seen by that read, one after it is announced here.
    const watch = await deps.feed.watch(id);

    /**
     * `settled` is said once the deployment is running, stopped or failed with no command accepted and not yet
     * ended, after any status or command event (and on a new stream once it caught up): what a follower waiting for
     * a deploy or a command waits for. The cursor's `settled` says whether it was the last thing said.
     */
    const state = {
      status: undefined as string | undefined,
      settledSent: cur.settled > 0,
      commandsPending: 0,
      commandsRead: opts.commands === false || !deps.temporal || opts.status === false,
    };
    const checkSettled = () => {
      if (opts.status === false || state.settledSent || !state.commandsRead || state.commandsPending > 0) return;
      if (!state.status || !SETTLED.includes(state.status as DeploymentRecord['status'])) return;
      state.settledSent = true;
      queue.push({ type: 'settled', data: { status: state.status }, at: { settled: 1 } });
    };
    // Temporal unreachable must not hold `settled` back for long: the status alone says it then.
    const commandsLate = setTimeout(() => {
      state.commandsRead = true;
      checkSettled();
    }, COMMANDS_WAIT_MS);

    async function platform() {
      const pos = { events: cur.events, logAt: cur.logAt, logSeq: cur.logSeq };
      while (!stop.signal.aborted) {
        const record = await sharedRecord(watch, deps.get, principal, id);
        if (!record) {
          queue.push({ type: 'destroyed', data: { deploymentId: id }, at: {} });
          return;
        }
        if (opts.status === false) pos.events = record.events.length;
        // The record's new status changes are told among the lines, each after the lines written before it: the
        // build's last line comes before `deploying`, though a wake may read both at once.
        const changes = record.events.slice(pos.events);
        const tellChangesBefore = (ms: number) => {
          while (changes.length > 0 && changes[0]!.at.getTime() < ms) {
            const e = changes.shift()!;
            pos.events++;
            queue.push({
              type: 'status',
              data: { status: e.status, message: e.message, at: e.at.toISOString() },
              at: { events: pos.events, settled: 0 },
            });
            state.settledSent = false;
          }
        };
        // After the record: the lines written before it changed are all there once it says so.
        for (;;) {
          // History is read as fast as the client takes it, not faster.
          await queue.room();
          if (stop.signal.aborted) return;
          const after = { at: pos.logAt, seq: pos.logSeq };
          const lines = await watch.read(`logs:${after.at}.${after.seq}`, () => deps.logs.after(id, after, LOG_PAGE));
          for (const { cursor, ...line } of lines) {
            tellChangesBefore(cursor.at);
            pos.logAt = cursor.at;
            pos.logSeq = cursor.seq;
            queue.push({ type: 'log', data: line, at: { logAt: cursor.at, logSeq: cursor.seq } });
          }
          if (lines.length < LOG_PAGE) break;
        }
        tellChangesBefore(Infinity);
        state.status = record.status;
        checkSettled();
        await watch.changed(Infinity, stop.signal);
      }
    }

    /** A source that may fail for a while (the engine, Temporal): followed again from where it was. */
    async function resilient(what: string, run: () => Promise<void>) {
      while (!stop.signal.aborted) {
        try {
          await run();
          return;
        } catch (err) {
          if (stop.signal.aborted) return;
          deps.log?.warn({ err, deploymentId: id }, `following a deployment's ${what} failed; following again`);
          await sleep(RETRY_MS, stop.signal);
        }
      }
    }

    const cmd = { at: cur.cmdAt, n: cur.cmdN };
    const commands = () =>
      followCommands(
        deps.temporal!,
        id,
        {
          from: cmd,
          signal: stop.signal,
          onCaughtUp: (pending) => {
            state.commandsPending = pending;
            state.commandsRead = true;
            checkSettled();
          },
        },
        (e, at) => {
          cmd.at = at.at;
          cmd.n = at.n;
          queue.push({ type: 'command', data: e, at: { cmdAt: at.at, cmdN: at.n, settled: 0 } }, true);
          state.settledSent = false;
        },
      );

    let app = { ns: cur.appNs, n: cur.appN };
    const output = () =>
      followDeploymentOutput(deps.docker!, id, { from: app, signal: stop.signal }, (line) => {
        app = advanceApp(app, line);
        const { ns: _ns, ...out } = line;
        queue.push({ type: 'log', data: out, at: { appNs: app.ns, appN: app.n } }, true);
      });

    platform().catch((err: unknown) => queue.fail(err));
    if (opts.commands !== false && deps.temporal) void resilient('commands', commands);
    if (opts.app !== false && deps.docker) void resilient('instances’ output', output);
    try {
      for await (const item of queue.drain()) {
        Object.assign(cur, item.at);
        yield { type: item.type, id: encodeCursor(cur), data: item.data } as FollowEvent;
        if (item.type === 'destroyed') {
          yield { type: 'end', id: encodeCursor(cur), data: { reason: 'destroyed' } };
          return;
        }
      }
    } finally {
      clearTimeout(commandsLate);
      signal.removeEventListener('abort', abort);
      stop.abort();
      watch.close();
    }
  };
}

export type DeploymentFollower = ReturnType<typeof createDeploymentFollower>;
