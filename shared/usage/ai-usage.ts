import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard, isDuplicateKey } from '../db/mongo';

/**
 * Tokens a builder turn's model calls used, as the provider reported them (shared/ai emits a `usage` event per
 * answer). One immutable entry per model step (`<turnId>:<step>`), so a step's activity retried after its insert
 * landed finds its own entry; kept after the session goes, so usage over a past period can still count it.
 */
export interface AiUsageEntry {
  _id: string;
  orgId: string;
  projectId: string | null;
  sessionId: string;
  turnId: string;
  inputTokens: number;
  outputTokens: number;
  at: Date;
}

export function createAiUsage(db: Db) {
  const col = db.collection<AiUsageEntry>('ai_usage');
  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('aiUsage.createIndexes', () => col.createIndex({ at: 1 }));
    },

    async record(entry: AiUsageEntry): Promise<void> {
      await guard('aiUsage.insert', () => col.insertOne(entry)).catch((err: unknown) => {
        // The same step's entry, written by an earlier attempt: it stands as first written.
        if (!isDuplicateKey(err)) throw err;
      });
    },

    /** Entries in [from, to), of one organisation or of all. */
    between: (from: Date, to: Date, orgId?: string) =>
      guard('aiUsage.between', () =>
        col
          .find({ ...(orgId ? { orgId } : {}), at: { $gte: from, $lt: to } })
          .sort({ at: 1, _id: 1 })
          .toArray(),
      ),
  };
}

export type AiUsage = ReturnType<typeof createAiUsage>;
