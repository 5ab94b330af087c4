import type { Db } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { AiProviderRecord, AiProviderSummary } from './types';

const WITHOUT_KEY = { projection: { apiKeySealed: 0 } } as const;

/**
 * MongoDB access to AI providers. A provider is changed by its org's admins through single-document `$set`s; nothing
 * rests on a read-modify-write (docs/architecture.md, "Decisions, and why"): name uniqueness is the unique index's.
 */
export function createAiProviderStore(db: Db) {
  const col = db.collection<AiProviderRecord>('ai_providers');
  return {
    ensureIndexes: () =>
      ensureIndexesWithRetry('ai_providers.createIndexes', () =>
        col.createIndex({ orgId: 1, name: 1 }, { unique: true }),
      ),
    insert: (record: AiProviderRecord) => guard('ai_providers.insert', () => col.insertOne(record)),
    /** The whole record, sealed key included: only for opening the key. */
    getSealed: (orgId: string, id: string) => guard('ai_providers.get', () => col.findOne({ _id: id, orgId })),
    get: (orgId: string, id: string): Promise<AiProviderSummary | null> =>
      guard('ai_providers.get', () => col.findOne({ _id: id, orgId }, WITHOUT_KEY)),
    list: (orgId: string, filter: { enabledOnly?: boolean } = {}): Promise<AiProviderSummary[]> =>
      guard('ai_providers.list', () =>
        col
          .find({ orgId, ...(filter.enabledOnly ? { enabled: true } : {}) }, WITHOUT_KEY)
          .sort({ name: 1 })
          .toArray(),
      ),
    /** True when the org has the provider (whether or not a field changed). */
    update: async (
      orgId: string,
      id: string,
      change: { set: Partial<Omit<AiProviderRecord, '_id' | 'orgId' | 'createdAt'>>; unsetModels?: boolean },
    ) =>
      (
        await guard('ai_providers.update', () =>
          col.updateOne(
            { _id: id, orgId },
            { $set: change.set, ...(change.unsetModels ? { $unset: { models: '' as const } } : {}) },
          ),
        )
      ).matchedCount === 1,
    remove: async (orgId: string, id: string) =>
      (await guard('ai_providers.remove', () => col.deleteOne({ _id: id, orgId }))).deletedCount === 1,
  };
}

export type AiProviderStore = ReturnType<typeof createAiProviderStore>;
