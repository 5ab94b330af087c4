import type { Collection } from 'mongodb';

import { guard, isDuplicateKey } from '../db/mongo';

export interface AttemptRecord {
  number: number;
  /** The workflow's name for the attempt (auto-1…, or the resend's workflow ID). */
  key: string;
  trigger: 'auto' | 'manual' | 'test';
  /** When the schedule placed the attempt; `at` is when it was sent. */
  scheduledAt: Date;
  at: Date;
  durationMs: number;
  responseStatus: number | null;
  responseHeaders: Record<string, string>;
  responseBody: string;
  errorClass:
    'timeout' | 'dns' | 'refused' | 'tls' | 'http_3xx' | 'http_4xx' | 'http_5xx' | 'blocked' | 'network' | null;
  error: string | null;
  nextAttemptAt: Date | null;
}

/** An attempt as stored: its own immutable document, keyed by event and attempt (see `attemptId`). */
export interface StoredAttempt extends AttemptRecord {
  _id: string;
  eventId: string;
}

/**
 * Where an event numbers its attempts (`numberedAttempts` on the event), attempt n is the document `<eventId>#<n>`:
 * its log is read by `_id` alone, one lookup per attempt and one past the last. FerretDB's SQLite backend serves only
 * `_id` equality from an index; a filter on `eventId` read the whole collection, on every attempt of every event.
 * The number is taken by inserting under it, so two attempts recorded at once (the automatic one and a resend) get
 * two numbers: the unique `_id` decides, never a count read before.
 */
export const attemptId = (eventId: string, number: number) => `${eventId}#${number}`;

const stripped = ({ _id: _, eventId: __, ...a }: StoredAttempt): AttemptRecord => a;

/** The attempts of a numbered event, from number `from` on, oldest first. */
export async function readNumbered(attempts: Collection<StoredAttempt>, eventId: string, from = 1) {
  const found: AttemptRecord[] = [];
  for (let n = from; ; n++) {
    const a = await guard('events.attempt', () => attempts.findOne({ _id: attemptId(eventId, n) }));
    if (!a) return found;
    found.push(stripped(a));
  }
}

/**
 * Appends an attempt to a numbered event under the first free number from `from` (the count the caller read, plus
 * one): a number taken meanwhile is read, and if it holds this attempt's key (an earlier try of this record that
 * was written) that is the answer; else the next number is tried. Returns the attempt as stored.
 */
export async function appendNumbered(
  attempts: Collection<StoredAttempt>,
  eventId: string,
  attempt: Omit<AttemptRecord, 'number'>,
  from: number,
): Promise<AttemptRecord> {
  for (let n = from; ; n++) {
    const doc: StoredAttempt = { _id: attemptId(eventId, n), eventId, ...attempt, number: n };
    try {
      await guard('events.recordAttempt', () => attempts.insertOne(doc));
      return stripped(doc);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
    const taken = await guard('events.attempt', () => attempts.findOne({ _id: attemptId(eventId, n) }));
    if (taken?.key === attempt.key) return stripped(taken);
  }
}
