import { setTimeout as sleepFor } from 'node:timers/promises';

import { createParser, type EventSourceMessage } from 'eventsource-parser';

import { ignore } from '@shared/ignore';

import { type Api, paceOf } from './api';
import { CliError } from './errors';
import type { LogLine, StatusEvent } from './view';

/** What GET /platform/deployments/{id}/events tells a follower, oldest first. */
export interface EventHandlers {
  status(e: StatusEvent): void;
  log(line: LogLine): void;
}

/**
 * Where the follow stopped: the deployment settled (with its status), or was destroyed. `cursor` is the last event's ID
 * (where a later connection resumes; none when the stream sent no event), `headers` the last connection's (the
 * budget left).
 */
export type StreamEnd = ({ kind: 'end'; status: string } | { kind: 'destroyed' }) & {
  cursor?: string;
  headers?: Headers;
};

/** The server comments every 15 s: this long without a byte is a dead connection, not a quiet deployment. */
const IDLE_MS = 45_000;
/** Connections in a row that may fail (refused, dropped before any event) before the follower gives up. */
const MAX_FAILURES = 5;
const RETRY_MS = 2000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Follows a deployment's event stream until it settles (nothing in progress) or is destroyed, from its start or from
 * `from` (an event ID a stream gave). Every event's `id` is a cursor: a connection that drops, stalls or reports a
 * failure is opened again with `Last-Event-ID`, so each status change and log line is handed over once, in the
 * server's order, however often that happens. `signal` stops it (a timeout, the user).
 */
export async function followEvents(
  api: Api,
  id: string,
  handlers: EventHandlers,
  signal: AbortSignal,
  from?: string,
  /** `destroyed`: read on past `settled` (a log follower), until the deployment is destroyed or `signal` stops it. */
  through: 'settled' | 'destroyed' = 'settled',
): Promise<StreamEnd> {
  let lastEventId = from;
  let headers: Headers | undefined;
  let failures = 0;
  for (;;) {
    const connection = new AbortController();
    const stop = () => connection.abort();
    signal.addEventListener('abort', stop, { once: true });
    let idle: NodeJS.Timeout | undefined;
    const awake = () => {
      clearTimeout(idle);
      idle = setTimeout(stop, IDLE_MS);
    };
    let delivered = false;
    let end: StreamEnd | undefined;
    try {
      awake();
      const opened = await api.stream(`/platform/deployments/${id}/events`, {
        ...(lastEventId ? { lastEventId } : {}),
        signal: connection.signal,
      });
      headers = opened.headers;
      const body = opened.body;
      let broken = false;
      const parser = createParser({
        onEvent(e: EventSourceMessage) {
          if (end || broken) return;
          // The server's own failure (id: the last good cursor): read on from there on a new connection.
          if (e.event === 'error') {
            broken = true;
            return;
          }
          if (e.id) lastEventId = e.id;
          delivered = true;
          if (e.event === 'status') handlers.status(JSON.parse(e.data) as StatusEvent);
          else if (e.event === 'log') handlers.log(JSON.parse(e.data) as LogLine);
          // The server keeps the stream open; `settled` (an older server's `end`) is where this follower stops.
          else if ((e.event === 'settled' && through === 'settled') || e.event === 'end')
            end = { kind: 'end', status: (JSON.parse(e.data) as { status: string }).status };
          else if (e.event === 'destroyed') end = { kind: 'destroyed' };
          if (end) end = { ...end, ...(lastEventId ? { cursor: lastEventId } : {}), ...(headers ? { headers } : {}) };
        },
      });
      const reader = body.pipeThrough(new TextDecoderStream()).getReader();
      try {
        while (!end && !broken) {
          const { done, value } = await reader.read();
          if (done) break;
          awake();
          parser.feed(value);
        }
      } finally {
        await reader.cancel().catch(ignore('already closed by the server or by an abort: closing twice is success'));
      }
      if (end) return end;
    } catch (err) {
      if (signal.aborted) throw err;
      // A refusal (404, 401, a spent budget) is final; only a connection that failed or stalled is tried again.
      const unreachable = err instanceof CliError && err.message.startsWith('cannot reach');
      if (!(unreachable || connection.signal.aborted || isNetworkError(err))) throw err;
    } finally {
      clearTimeout(idle);
      signal.removeEventListener('abort', stop);
    }
    failures = delivered ? 0 : failures + 1;
    if (failures >= MAX_FAILURES)
      throw new CliError(
        `lost the event stream of deployment ${id} ${MAX_FAILURES} times in a row`,
        `it goes on without you: slipway status ${id}`,
        2,
      );
    if (!delivered) await sleep(RETRY_MS);
  }
}

/** Reads between two connections to a settled deployment's stream come at most this often (see paceOf). */
const TAIL_GAP_MS = 2000;

/**
 * Follows the stream past the point where the deployment settles. The server says `settled` once the deployment is
 * running, stopped or failed with no command in progress, and a redeploy or rollback of a running deployment leaves
 * it running throughout, so a release in the making is followed from settled to settled (paced by the budget the
 * server reports) until `done` says it is over, or the deployment is destroyed.
 */
export async function tailEvents(
  api: Api,
  id: string,
  handlers: EventHandlers,
  signal: AbortSignal,
  opts: { from?: string; done: () => Promise<boolean> | boolean },
): Promise<StreamEnd> {
  let cursor = opts.from;
  for (;;) {
    const end = await followEvents(api, id, handlers, signal, cursor);
    cursor = end.cursor ?? cursor;
    if (end.kind === 'destroyed' || (await opts.done())) return { ...end, ...(cursor ? { cursor } : {}) };
    await sleepFor(end.headers ? paceOf(end.headers, TAIL_GAP_MS) : TAIL_GAP_MS, undefined, { signal });
  }
}

/** A body cut off mid-read (server restarted, proxy closed it): undici's TypeError("terminated") and its kin. */
function isNetworkError(err: unknown): boolean {
  return err instanceof TypeError || (err as { name?: string }).name === 'AbortError';
}
