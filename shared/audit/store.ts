import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { AuditEvent, AuditQuery } from './types';

/**
 * The audit trail: append-only by construction. The store offers insert and reads, and nothing that updates or
 * deletes, so no route or service can rewrite history through it. Each event is an immutable insert, which is also
 * what FerretDB makes safe under concurrency (docs/architecture.md, "Decisions, and why").
 */
export function createAuditStore(db: Db) {
  const events = db.collection<AuditEvent>('audit_events');
  return {
    async ensureIndexes() {
      // One index per command (FerretDB); each filter of GET /platform/audit leads with orgId and ends newest first.
      await ensureIndexesWithRetry('audit.createIndexes', async () => {
        await events.createIndex({ orgId: 1, at: -1, _id: -1 });
        await events.createIndex({ orgId: 1, 'actor.userId': 1, at: -1 });
        await events.createIndex({ orgId: 1, 'actor.tokenId': 1, at: -1 });
        await events.createIndex({ orgId: 1, action: 1, at: -1 });
        await events.createIndex({ orgId: 1, 'resource.type': 1, 'resource.id': 1, at: -1 });
        await events.createIndex({ orgId: 1, projectId: 1, at: -1 });
        await events.createIndex({ orgId: 1, outcome: 1, at: -1 });
      });
    },

    append: (e: AuditEvent) => guard('audit.append', () => events.insertOne(e)),

    /** Newest first, ties broken by _id so a cursor (at, _id) never skips nor repeats an event. */
    list(q: AuditQuery): Promise<AuditEvent[]> {
      const and: Filter<AuditEvent>[] = [{ orgId: q.orgId }];
      if (q.actor) and.push({ $or: [{ 'actor.userId': q.actor }, { 'actor.tokenId': q.actor }] });
      if (q.action) and.push({ action: q.action });
      if (q.resourceType) and.push({ 'resource.type': q.resourceType });
      if (q.resourceId) and.push({ 'resource.id': q.resourceId });
      if (q.projectId) and.push({ projectId: q.projectId });
      if (q.outcome) and.push({ outcome: q.outcome });
      if (q.since) and.push({ at: { $gte: q.since } });
      if (q.until) and.push({ at: { $lt: q.until } });
      if (q.after) and.push({ $or: [{ at: { $lt: q.after.at } }, { at: q.after.at, _id: { $lt: q.after.id } }] });
      return guard('audit.list', () => events.find({ $and: and }).sort({ at: -1, _id: -1 }).limit(q.limit).toArray());
    },
  };
}

export type AuditStore = ReturnType<typeof createAuditStore>;
