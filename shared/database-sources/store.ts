import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { DatabaseSourceRecord, SourceQuestionRecord, SourceTestOutcome } from './types';

/**
 * Database sources and the questions asked of them. A source's name is unique in its organisation (unique index);
 * every write sets whole fields and none is computed from a read, which FerretDB would not make atomic. A question is
 * inserted by the api and completed once by its answer.
 */
export function createSourceStore(db: Db) {
  const sources = db.collection<DatabaseSourceRecord>('database_sources');
  const questions = db.collection<SourceQuestionRecord>('database_source_questions');

  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('database_sources.createIndexes', async () => {
        await sources.createIndex({ orgId: 1, name: 1 }, { unique: true });
        await sources.createIndex({ orgId: 1, projectId: 1 });
        await sources.createIndex({ databaseId: 1 });
        await questions.createIndex({ sourceId: 1, askedAt: -1 });
      });
    },

    insert: (s: DatabaseSourceRecord) => guard('database_sources.insert', () => sources.insertOne(s)),

    /** The org's source, or null: another organisation's reads as absent. */
    get: (orgId: string, id: string) => guard('database_sources.get', () => sources.findOne({ _id: id, orgId })),

    async list(orgId: string, q: { limit: number; offset: number; projectId?: string; visibleProjects?: string[] }) {
      const filter: Filter<DatabaseSourceRecord> = { orgId };
      if (q.projectId) filter.projectId = q.projectId;
      if (q.visibleProjects) filter.$or = [{ projectId: null }, { projectId: { $in: q.visibleProjects } }];
      const [items, total] = await Promise.all([
        guard('database_sources.list', () =>
          sources.find(filter).sort({ name: 1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('database_sources.count', () => sources.countDocuments(filter)),
      ]);
      return { items, total };
    },

    count: (orgId: string) => guard('database_sources.usage', () => sources.countDocuments({ orgId })),

    /** Sets the given fields whole (a PATCH); false when the organisation has no such source. */
    async update(orgId: string, id: string, set: Partial<DatabaseSourceRecord>): Promise<boolean> {
      const r = await guard('database_sources.update', () =>
        sources.updateOne({ _id: id, orgId }, { $set: { ...set, updatedAt: new Date() } }),
      );
      return r.matchedCount > 0;
    },

    setLastTest: (orgId: string, id: string, lastTest: SourceTestOutcome) =>
      guard('database_sources.setLastTest', () => sources.updateOne({ _id: id, orgId }, { $set: { lastTest } })),

    async remove(orgId: string, id: string): Promise<boolean> {
      const r = await guard('database_sources.remove', () => sources.deleteOne({ _id: id, orgId }));
      await guard('database_source_questions.remove', () => questions.deleteMany({ orgId, sourceId: id }));
      return r.deletedCount > 0;
    },

    /** Sources that refer to a managed database, which go when it does. */
    byDatabase: (databaseId: string) =>
      guard('database_sources.byDatabase', () => sources.find({ databaseId }).toArray()),

    insertQuestion: (q: SourceQuestionRecord) =>
      guard('database_source_questions.insert', () => questions.insertOne(q)),

    /** The answer's one write: everything it learnt, set whole. */
    completeQuestion: (id: string, set: Partial<SourceQuestionRecord>) =>
      guard('database_source_questions.complete', () => questions.updateOne({ _id: id }, { $set: set })),

    getQuestion: (orgId: string, sourceId: string, id: string) =>
      guard('database_source_questions.get', () => questions.findOne({ _id: id, orgId, sourceId })),

    getQuestionAny: (id: string) => guard('database_source_questions.getAny', () => questions.findOne({ _id: id })),

    async listQuestions(orgId: string, sourceId: string, q: { limit: number; offset: number }) {
      const filter = { orgId, sourceId };
      const [items, total] = await Promise.all([
        guard('database_source_questions.list', () =>
          questions.find(filter).sort({ askedAt: -1, _id: 1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('database_source_questions.count', () => questions.countDocuments(filter)),
      ]);
      return { items, total };
    },
  };
}

export type SourceStore = ReturnType<typeof createSourceStore>;
