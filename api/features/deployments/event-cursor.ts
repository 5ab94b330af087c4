import { AppError } from '@shared/errors';

/**
 * Where a follower of a deployment's events is, one position per source: status events seen, the last platform log
 * line's (at, seq), the status events count when `settled` was last sent, the last command event's (time, tiebreak)
 * and the last app line's engine time in nanoseconds (with a tiebreak). It travels as the SSE `id:` of every event,
 * so `Last-Event-ID` resumes each source exactly after it.
 */
export interface EventCursor {
  events: number;
  logAt: number;
  logSeq: number;
  settled: number;
  cmdAt: number;
  cmdN: number;
  /** 0: from when the stream starts (a new stream, or an ID from before app lines were on it). */
  appNs: bigint;
  appN: number;
}

export const START: EventCursor = {
  events: 0,
  logAt: 0,
  logSeq: -1,
  settled: 0,
  cmdAt: 0,
  cmdN: 0,
  appNs: 0n,
  appN: 0,
};
export const encodeCursor = (c: EventCursor) =>
  `${c.events}.${c.logAt}.${c.logSeq}.${c.settled}.${c.cmdAt}.${c.cmdN}.${c.appNs}.${c.appN}`;

/**
 * The shape of an event ID: what `Last-Event-ID` (and the documented `lastEventId`) may be. The first three parts
 * alone are the IDs of streams from before commands and app lines were on them: still accepted.
 */
export const EVENT_ID =
  /^(\d{1,9})\.(\d{1,15})\.(-1|\d{1,9})(?:\.(\d{1,9})\.(\d{1,15})\.(\d{1,6})\.(\d{1,20})\.(\d{1,6}))?$/;
export const EVENT_ID_MAX = 96;
export const EVENT_ID_REFUSED =
  'Last-Event-ID is not an event ID of this stream; send the `id` of the last event you received, or none to start over.';

/** A cursor from `Last-Event-ID`; anything else is refused with what to send instead. */
export function decodeCursor(id: string): EventCursor {
  const m = EVENT_ID.exec(id);
  if (!m) throw new AppError('INVALID_REQUEST', EVENT_ID_REFUSED);
  return {
    events: Number(m[1]),
    logAt: Number(m[2]),
    logSeq: Number(m[3]),
    settled: Number(m[4] ?? 0),
    cmdAt: Number(m[5] ?? 0),
    cmdN: Number(m[6] ?? 0),
    appNs: BigInt(m[7] ?? 0),
    appN: Number(m[8] ?? 0),
  };
}
