import type { LogStore } from '../../../shared/deployments/logs-store';
import type { StatusFeed } from '../../../shared/deployments/status-feed';
import type { DeploymentRecord } from '../../../shared/deployments/types';
import { AppError } from '../../../shared/errors';
import type { Principal } from '../../../shared/identity/service';
import { SETTLED, sharedRecord } from './wait';

/**
 * Where a follower of a deployment's events is: how many status events it has seen, and the last log line's
 * (at, seq). It travels as the SSE `id:` of every event, so `Last-Event-ID` resumes exactly after it.
 */
export interface EventCursor {
  events: number;
  logAt: number;
  logSeq: number;
}

export const START: EventCursor = { events: 0, logAt: 0, logSeq: -1 };
export const encodeCursor = (c: EventCursor) => `${c.events}.${c.logAt}.${c.logSeq}`;

/** The shape of an event ID: what `Last-Event-ID` (and the documented `lastEventId`) may be. */
export const EVENT_ID = /^(\d{1,9})\.(\d{1,15})\.(-1|\d{1,9})$/;
export const EVENT_ID_REFUSED =
  'Last-Event-ID is not an event ID of this stream; send the `id` of the last event you received, or none to start over.';

/** A cursor from `Last-Event-ID`; anything else is refused with what to send instead. */
export function decodeCursor(id: string): EventCursor {
  const m = EVENT_ID.exec(id);
  if (!m) throw new AppError('INVALID_REQUEST', EVENT_ID_REFUSED);
  return { events: Number(m[1]), logAt: Number(m[2]), logSeq: Number(m[3]) };
}

export type FollowEvent =
  | { type: 'status'; id: string; data: { status: string; message: string; at: string } }
  | { type: 'log'; id: string; data: { timestamp: string; stream: string; message: string } }
  /** The deployment settled (running, stopped, failed): the stream ends after this. */
  | { type: 'end'; id: string; data: { status: string } }
  /** The deployment was destroyed while followed. */
  | { type: 'destroyed'; id: string; data: { deploymentId: string } };

const LOG_PAGE = 200;

/**
 * A deployment's status changes and the log lines the platform writes (build, system), in order, from a cursor
 * on, until it settles or is destroyed. It reads only when woken: by the worker's announcements of a status or of
 * log lines, by the api's of a destroy, or by the feed's slow recheck, each shared by every follower of the
 * deployment in this process, as are the reads a wake causes.
 */
export function createDeploymentFollower(deps: {
  feed: Pick<StatusFeed, 'watch'>;
  get: (principal: Principal, id: string) => Promise<DeploymentRecord>;
  logs: Pick<LogStore, 'after'>;
}) {
  return async function* follow(
    principal: Principal,
    id: string,
    from: EventCursor,
    signal: AbortSignal,
  ): AsyncGenerator<FollowEvent> {
    // Subscribed before the first read: a destroy before it is seen by that read, one after it is announced here.
    const watch = await deps.feed.watch(id);
    const cur = { ...from };
    try {
      while (!signal.aborted) {
        const record = await sharedRecord(watch, deps.get, principal, id);
        if (!record) {
          yield { type: 'destroyed', id: encodeCursor(cur), data: { deploymentId: id } };
          return;
        }
        for (; cur.events < record.events.length; cur.events++) {
          const e = record.events[cur.events]!;
          const next = { ...cur, events: cur.events + 1 };
          yield {
            type: 'status',
            id: encodeCursor(next),
            data: { status: e.status, message: e.message, at: e.at.toISOString() },
          };
        }
        // After the record: the lines written before it settled are all there once it says so.
        for (;;) {
          const after = { at: cur.logAt, seq: cur.logSeq };
          const lines = await watch.read(`logs:${after.at}.${after.seq}`, () => deps.logs.after(id, after, LOG_PAGE));
          for (const { cursor, ...line } of lines) {
            cur.logAt = cursor.at;
            cur.logSeq = cursor.seq;
            yield { type: 'log', id: encodeCursor(cur), data: line };
          }
          if (lines.length < LOG_PAGE) break;
        }
        if (SETTLED.includes(record.status)) {
          yield { type: 'end', id: encodeCursor(cur), data: { status: record.status } };
          return;
        }
        await watch.changed(Infinity, signal);
      }
    } finally {
      watch.close();
    }
  };
}

export type DeploymentFollower = ReturnType<typeof createDeploymentFollower>;
