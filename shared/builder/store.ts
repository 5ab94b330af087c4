import { randomUUID } from 'node:crypto';

import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';
import { DatabaseError } from '../errors';
import {
  type CheckpointReason,
  type CheckpointRecord,
  DEFAULT_SESSION_KEY,
  type MessageRecord,
  type RunningTurnRecord,
  type Session,
  type SessionRecord,
  type ShareRecord,
  type TurnEventRecord,
  type TurnEventType,
} from './types';

/**
 * FerretDB 1.24 (SQLite) answers a unique-index violation on insert with E11000 like MongoDB, but on some paths with
 * an InternalError naming the UNIQUE constraint: both mean "someone else holds that key".
 */
export const isTaken = (err: unknown) =>
  isDuplicateKey(err) ||
  (err instanceof DatabaseError && String((err.cause as Error | undefined)?.message).includes('UNIQUE constraint'));

/** What a new checkpoint is made of; its seq is the store's, and so is its _id unless a retried writer names one. */
export interface NewCheckpoint {
  _id?: string;
  sessionId: string;
  orgId: string;
  files: CheckpointRecord['files'];
  createdBy: string;
  reason: CheckpointReason;
  messageId?: string;
  source?: string;
}

/**
 * MongoDB access of the AI builder (types.ts says which index makes what safe). Every read takes the org: another
 * organisation's session, checkpoint or share reads as absent.
 */
export function createBuilderStore(db: Db) {
  const sessions = db.collection<SessionRecord>('builder_sessions');
  const checkpoints = db.collection<CheckpointRecord>('builder_checkpoints');
  const messages = db.collection<MessageRecord>('builder_messages');
  const shares = db.collection<ShareRecord>('builder_shares');
  const events = db.collection<TurnEventRecord>('builder_turn_events');
  const running = db.collection<RunningTurnRecord>('builder_running_turns');

  async function head(sessionId: string): Promise<CheckpointRecord | undefined> {
    const [latest] = await guard('builder.head', () =>
      checkpoints.find({ sessionId }).sort({ seq: -1 }).limit(1).toArray(),
    );
    return latest;
  }

  const withHead = async (s: SessionRecord | null): Promise<Session | undefined> =>
    s ? { ...s, head: await head(s._id) } : undefined;

  return {
    async ensureIndexes() {
      // One index per command: FerretDB drops the connection when a multi-index createIndexes meets existing ones.
      await ensureIndexesWithRetry('builder.createIndexes', async () => {
        await sessions.createIndex({ projectId: 1, defaultKey: 1 }, { unique: true });
        await sessions.createIndex({ orgId: 1, projectId: 1 });
        await checkpoints.createIndex({ sessionId: 1, seq: 1 }, { unique: true });
        await messages.createIndex({ sessionId: 1, createdAt: 1 });
        await events.createIndex({ turnId: 1, seq: 1 }, { unique: true });
      });
    },

    // ----- sessions -----

    insertSession: (s: SessionRecord) => guard('builder.insertSession', () => sessions.insertOne(s)),

    /** The org's session with its head, or undefined (another org's reads as absent). */
    getSession: async (orgId: string, id: string) =>
      withHead(await guard('builder.getSession', () => sessions.findOne({ _id: id, orgId }))),

    /**
     * The project's default session, made on first call. Concurrent callers race on the unique (projectId,
     * defaultKey) index: one insert wins, the others read the winner.
     */
    async defaultSession(record: Omit<SessionRecord, 'defaultKey'>): Promise<{ session: Session; created: boolean }> {
      try {
        await guard('builder.insertSession', () => sessions.insertOne({ ...record, defaultKey: DEFAULT_SESSION_KEY }));
        return { session: { ...record, defaultKey: DEFAULT_SESSION_KEY, head: undefined }, created: true };
      } catch (err) {
        if (!isTaken(err)) throw err;
      }
      const found = await guard('builder.defaultSession', () =>
        sessions.findOne({ orgId: record.orgId, projectId: record.projectId, defaultKey: DEFAULT_SESSION_KEY }),
      );
      if (!found) throw new Error('the default session of a project is taken but cannot be read');
      return { session: (await withHead(found))!, created: false };
    },

    /** The sessions of a project, newest first (at most `limit`). */
    listSessions: (orgId: string, projectId: string, limit: number) =>
      guard('builder.listSessions', () =>
        sessions.find({ orgId, projectId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray(),
      ),

    findDefaultSession: async (orgId: string, projectId: string) =>
      (await guard('builder.defaultSession', () =>
        sessions.findOne({ orgId, projectId, defaultKey: DEFAULT_SESSION_KEY }),
      )) ?? undefined,

    /** Writes the fields whole (never computed from a read); false when the org has no such session. */
    async setSessionFields(orgId: string, id: string, set: Pick<SessionRecord, 'providerId' | 'model'>) {
      const result = await guard('builder.setSessionFields', () =>
        sessions.updateOne({ _id: id, orgId }, { $set: set }),
      );
      return result.matchedCount === 1;
    },

    // ----- checkpoints -----

    head,

    /**
     * The compare-and-set of a session's head: inserts the checkpoint as the child of `parent` (undefined: the
     * session's first). Two writers that read the same head make the same seq, and the unique (sessionId, seq) index
     * lets exactly one insert: the other gets undefined and decides (409, or re-read and retry).
     */
    async appendCheckpoint(
      parent: CheckpointRecord | undefined,
      c: NewCheckpoint,
    ): Promise<CheckpointRecord | undefined> {
      const { _id, ...fields } = c;
      const record: CheckpointRecord = {
        _id: _id ?? randomUUID(),
        seq: (parent?.seq ?? 0) + 1,
        ...(parent ? { parent: parent._id } : {}),
        ...fields,
        createdAt: new Date(),
      };
      try {
        await guard('builder.appendCheckpoint', () => checkpoints.insertOne(record));
        return record;
      } catch (err) {
        if (isTaken(err)) return undefined;
        throw err;
      }
    },

    getCheckpoint: async (orgId: string, sessionId: string, id: string) =>
      (await guard('builder.getCheckpoint', () => checkpoints.findOne({ _id: id, orgId, sessionId }))) ?? undefined,

    /** The latest checkpoints of a session, newest first. */
    recentCheckpoints: (sessionId: string, limit: number) =>
      guard('builder.recentCheckpoints', () =>
        checkpoints.find({ sessionId }).sort({ seq: -1 }).limit(limit).toArray(),
      ),

    // ----- messages -----

    /** Idempotent by _id: a retried activity writes the same message once. */
    async insertMessage(m: MessageRecord): Promise<void> {
      try {
        await guard('builder.insertMessage', () => messages.insertOne(m));
      } catch (err) {
        if (!isTaken(err)) throw err;
      }
    },

    getMessage: async (sessionId: string, id: string) =>
      (await guard('builder.getMessage', () => messages.findOne({ _id: id, sessionId }))) ?? undefined,

    /** The latest `limit` messages, oldest first. */
    async listMessages(sessionId: string, limit: number): Promise<MessageRecord[]> {
      const newest = await guard('builder.listMessages', () =>
        messages.find({ sessionId }).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray(),
      );
      return newest.reverse();
    },

    /** Marks (never deletes) every message written at or after the head of seq `fromSeq`. */
    markReverted: (sessionId: string, fromSeq: number) =>
      guard('builder.markReverted', () =>
        messages.updateMany({ sessionId, baseSeq: { $gte: fromSeq } }, { $set: { reverted: true } }),
      ),

    // ----- shares -----

    insertShare: (s: ShareRecord) => guard('builder.insertShare', () => shares.insertOne(s)),

    /** The org's share if it is neither revoked nor expired. */
    async liveShare(orgId: string, slug: string, now = new Date()): Promise<ShareRecord | undefined> {
      const s = await guard('builder.getShare', () => shares.findOne({ _id: slug, orgId }));
      if (!s || s.revokedAt || (s.expiresAt && s.expiresAt <= now)) return undefined;
      return s;
    },

    /** Sets revokedAt (a write of a constant, so concurrent revokes agree); false when there is no live share. */
    async revokeShare(orgId: string, slug: string, now = new Date()): Promise<boolean> {
      const result = await guard('builder.revokeShare', () =>
        shares.updateOne({ _id: slug, orgId, revokedAt: { $exists: false } }, { $set: { revokedAt: now } }),
      );
      return result.matchedCount === 1;
    },

    // ----- running turns -----

    /** The session's running-turn marker, or the one that holds it: undefined when this claim won. */
    async claimTurn(r: RunningTurnRecord): Promise<RunningTurnRecord | undefined> {
      try {
        await guard('builder.claimTurn', () => running.insertOne(r));
        return undefined;
      } catch (err) {
        if (!isTaken(err)) throw err;
      }
      const holder = await guard('builder.runningTurn', () => running.findOne({ _id: r._id }));
      // Released between our insert and this read: report the claim as lost to a turn that just ended.
      return holder ?? { ...r, turnId: '' };
    },

    runningTurn: async (sessionId: string) =>
      (await guard('builder.runningTurn', () => running.findOne({ _id: sessionId }))) ?? undefined,

    /** Removes the marker only if it is still this turn's (a stale turn's release never frees a newer one). */
    releaseTurn: (sessionId: string, turnId: string) =>
      guard('builder.releaseTurn', () => running.deleteOne({ _id: sessionId, turnId })),

    // ----- turn events -----

    /**
     * Appends events of one turn in order. seq is the next after the highest stored, kept locally between calls; a
     * duplicate (another writer of the same turn, e.g. an activity attempt that outlived its timeout) re-reads the
     * highest and goes on after it, so events are never lost nor overwritten.
     */
    eventWriter(turn: { turnId: string; sessionId: string; orgId: string }) {
      let next: number | undefined;
      const readNext = async () => {
        const [last] = await guard('builder.lastEvent', () =>
          events.find({ turnId: turn.turnId }).sort({ seq: -1 }).limit(1).toArray(),
        );
        return (last?.seq ?? 0) + 1;
      };
      return async (type: TurnEventType, data: Record<string, unknown> = {}): Promise<TurnEventRecord> => {
        for (let attempt = 0; ; attempt++) {
          next ??= await readNext();
          const e: TurnEventRecord = { _id: `${turn.turnId}:${next}`, ...turn, seq: next, type, data, at: new Date() };
          try {
            await guard('builder.appendEvent', () => events.insertOne(e));
            next += 1;
            return e;
          } catch (err) {
            if (!isTaken(err) || attempt >= 20) throw err;
            next = undefined;
          }
        }
      };
    },

    /** Whether the turn already stored an event of this type (a retried activity does not write it twice). */
    hasEvent: async (turnId: string, type: TurnEventType) =>
      (await guard('builder.hasEvent', () => events.countDocuments({ turnId, type }, { limit: 1 }))) > 0,

    /** A turn's events after `afterSeq`, in order; the org and session must match (another's read as none). */
    eventsAfter: (q: { orgId: string; sessionId: string; turnId: string }, afterSeq: number, limit = 500) =>
      guard('builder.eventsAfter', () =>
        events
          .find({ turnId: q.turnId, orgId: q.orgId, sessionId: q.sessionId, seq: { $gt: afterSeq } })
          .sort({ seq: 1 })
          .limit(limit)
          .toArray(),
      ),
  };
}

export type BuilderStore = ReturnType<typeof createBuilderStore>;
