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
      await guard('deployment_logs.append', () =>
        col.insertMany(messages.map((message, seq) => ({ deploymentId, at, seq, stream, message }))),
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
