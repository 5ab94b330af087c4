import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { LogLine } from '../engine/logs';

interface StoredLogLine {
  deploymentId: string;
  at: Date;
  seq: number;
  stream: 'build' | 'system';
  message: string;
}

/**
 * The order of lines within one millisecond. Two batches can land in the same millisecond (a build's output and a
 * system notice); numbering each from 0 gave both the same (at, seq) keys, so a follower's cursor after one batch's
 * line skipped the other's. A number that only grows in this process orders them; no shared counter is needed, since
 * a deployment's lines come from the one worker running its activity.
 */
let nextSeq = 0;

/** Lines the platform itself writes for a deployment (build output, system notices); container output stays in the engine. */
export function createLogStore(db: Db) {
  const col = db.collection<StoredLogLine>('deployment_logs');
  return {
    ensureIndexes: () =>
      ensureIndexesWithRetry('deployment_logs.createIndexes', () =>
        col.createIndex({ deploymentId: 1, at: 1, seq: 1 }),
      ),

    async append(deploymentId: string, stream: StoredLogLine['stream'], messages: string[]): Promise<void> {
      if (messages.length === 0) return;
      const at = new Date();
      const first = nextSeq;
      nextSeq += messages.length;
      await guard('deployment_logs.append', () =>
        col.insertMany(messages.map((message, i) => ({ deploymentId, at, seq: first + i, stream, message }))),
      );
    },

    /**
     * Up to `limit` lines written after `cursor` (at, seq), oldest first, each with its own cursor: a follower
     * (the events stream) reads on from where it stopped.
     */
    async after(
      deploymentId: string,
      cursor: { at: number; seq: number },
      limit: number,
    ): Promise<(LogLine & { cursor: { at: number; seq: number } })[]> {
      const at = new Date(cursor.at);
      const docs = await guard('deployment_logs.after', () =>
        col
          .find({ deploymentId, $or: [{ at: { $gt: at } }, { at, seq: { $gt: cursor.seq } }] })
          .sort({ at: 1, seq: 1 })
          .limit(limit)
          .toArray(),
      );
      return docs.map((d) => ({
        timestamp: d.at.toISOString(),
        stream: d.stream,
        message: d.message,
        cursor: { at: d.at.getTime(), seq: d.seq },
      }));
    },

    /** The last `limit` lines (of one stream, at or after `since`, when given), oldest first. */
    async tail(
      deploymentId: string,
      limit: number,
      only: { stream?: StoredLogLine['stream']; since?: Date } = {},
    ): Promise<LogLine[]> {
      const filter: Filter<StoredLogLine> = { deploymentId };
      if (only.stream) filter.stream = only.stream;
      if (only.since) filter.at = { $gte: only.since };
      const docs = await guard('deployment_logs.tail', () =>
        col.find(filter).sort({ at: -1, seq: -1 }).limit(limit).toArray(),
      );
      return docs.reverse().map((d) => ({ timestamp: d.at.toISOString(), stream: d.stream, message: d.message }));
    },
  };
}

export type LogStore = ReturnType<typeof createLogStore>;
