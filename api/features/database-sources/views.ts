import type { QueryResult } from '@shared/database-sources/endpoint';
import type { DatabaseSourceRecord, SourceQuestionRecord } from '@shared/database-sources/types';

/** A source as clients see it: never the password, only whether one is set. */
export function sourceView(s: DatabaseSourceRecord) {
  return {
    id: s._id,
    name: s.name,
    projectId: s.projectId,
    engine: s.engine,
    databaseId: s.databaseId,
    host: s.host,
    port: s.port,
    database: s.database,
    user: s.user,
    tls: s.tls,
    passwordSet: s.passwordSealed !== null || s.databaseId !== null,
    lastTest: s.lastTest
      ? {
          at: new Date(s.lastTest.at).toISOString(),
          ok: s.lastTest.ok,
          ...(s.lastTest.serverVersion ? { serverVersion: s.lastTest.serverVersion } : {}),
          ...(s.lastTest.privileges ? { privileges: s.lastTest.privileges } : {}),
          ...(s.lastTest.error ? { error: s.lastTest.error } : {}),
        }
      : null,
    createdAt: new Date(s.createdAt).toISOString(),
    updatedAt: new Date(s.updatedAt).toISOString(),
  };
}

export function questionView(q: SourceQuestionRecord) {
  return {
    id: q._id,
    sourceId: q.sourceId,
    question: q.question,
    status: q.status,
    sql: q.sql,
    explanation: q.explanation,
    rule: q.rule,
    error: q.error,
    result: q.resultJson ? (JSON.parse(q.resultJson) as QueryResult) : null,
    providerId: q.providerId,
    model: q.model,
    askedAt: new Date(q.askedAt).toISOString(),
    answeredAt: q.answeredAt ? new Date(q.answeredAt).toISOString() : null,
  };
}
