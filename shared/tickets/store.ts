import type { Db, Filter } from 'mongodb';

import { ensureIndexesWithRetry, guard } from '../db/mongo';
import type { TicketComment, TicketRecord, TicketSeverity, TicketStatus, TicketStatusEvent } from './types';

/**
 * Support tickets (docs/architecture.md, "Support tickets"): the ticket, its comments and its status changes are
 * inserts; a status change's number is unique per ticket, so the status is the newest event's whatever the timing.
 */
export function createTicketStore(db: Db) {
  const tickets = db.collection<TicketRecord>('tickets');
  const statuses = db.collection<TicketStatusEvent>('ticket_status');
  const comments = db.collection<TicketComment>('ticket_comments');
  return {
    async ensureIndexes() {
      await ensureIndexesWithRetry('tickets.createIndexes', async () => {
        await tickets.createIndex({ orgId: 1, createdAt: -1 });
        await statuses.createIndex({ ticketId: 1, seq: 1 }, { unique: true });
        await comments.createIndex({ ticketId: 1, at: 1 });
      });
    },
    insert: (t: TicketRecord) => guard('tickets.insert', () => tickets.insertOne(t)),
    get: (orgId: string, id: string) => guard('tickets.get', () => tickets.findOne({ _id: id, orgId })),
    /** Opened since `since` in the organisation: the plan's daily allowance counts these. */
    countSince: (orgId: string, since: Date) =>
      guard('tickets.countSince', () => tickets.countDocuments({ orgId, createdAt: { $gte: since } })),
    async list(q: {
      orgId: string;
      status?: TicketStatus | undefined;
      severity?: TicketSeverity | undefined;
      limit: number;
      offset: number;
    }) {
      const filter: Filter<TicketRecord> = {
        orgId: q.orgId,
        ...(q.status ? { status: q.status } : {}),
        ...(q.severity ? { severity: q.severity } : {}),
      };
      const [items, total] = await Promise.all([
        guard('tickets.list', () =>
          tickets.find(filter).sort({ createdAt: -1, _id: -1 }).skip(q.offset).limit(q.limit).toArray(),
        ),
        guard('tickets.count', () => tickets.countDocuments(filter)),
      ]);
      return { items, total };
    },

    /** Throws the duplicate key (isDuplicateKey) when another change took `seq` first. */
    insertStatus: (e: TicketStatusEvent) => guard('tickets.insertStatus', () => statuses.insertOne(e)),
    history: (ticketId: string) =>
      guard('tickets.history', () => statuses.find({ ticketId }).sort({ seq: 1 }).limit(10_000).toArray()),
    newestStatus: (ticketId: string) =>
      guard('tickets.newestStatus', () => statuses.find({ ticketId }).sort({ seq: -1 }).limit(1).next()),
    /** The list's copy of the status, moved forward only: a late write of an older change leaves a newer one. */
    noteStatus: (ticketId: string, status: TicketStatus, seq: number) =>
      guard('tickets.noteStatus', () =>
        tickets.updateOne({ _id: ticketId, statusSeq: { $lt: seq } }, { $set: { status, statusSeq: seq } }),
      ),

    insertComment: (c: TicketComment) => guard('tickets.insertComment', () => comments.insertOne(c)),
    comments: (ticketId: string) =>
      guard('tickets.comments', () => comments.find({ ticketId }).sort({ at: 1, _id: 1 }).limit(10_000).toArray()),
  };
}

export type TicketStore = ReturnType<typeof createTicketStore>;
