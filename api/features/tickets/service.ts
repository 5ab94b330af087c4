import { randomUUID } from 'node:crypto';

import { isDuplicateKey } from '@shared/db/mongo';
import type { DeploymentStore } from '@shared/deployments/store';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import type { KeyedLock } from '@shared/locks';
import { PLAN_POLICIES } from '@shared/plans';
import type { TicketStore } from '@shared/tickets/store';
import {
  TICKET_TRANSITIONS,
  type TicketRecord,
  type TicketSeverity,
  type TicketStatus,
  type TicketStatusEvent,
} from '@shared/tickets/types';

import { insertWithinPlan } from '../owned';

const DAY_MS = 24 * 3600 * 1000;
/** Status changes from the same status retry on the newest; this many losses in a row is a 409. */
const MAX_ATTEMPTS = 8;

export const ticketNotFound = (id: string) =>
  new AppError('TICKET_NOT_FOUND', `No ticket ${id} in this organisation.`, { ticketId: id });

/** Who may close a ticket, or reopen a closed one: owners and admins, and the one who opened it. */
const mayClose = (p: Principal, t: TicketRecord) =>
  p.user.role === 'owner' || p.user.role === 'admin' || t.authorId === p.user._id;

/**
 * Support tickets: opened within the plan's daily allowance, commented and moved through their statuses by the
 * organisation's members. Everything is an insert; the status is the newest status event's.
 */
export function createTicketService(deps: {
  store: TicketStore;
  deployments: Pick<DeploymentStore, 'get'>;
  lock: KeyedLock;
  quotaMultiplier: number;
}) {
  const { store } = deps;

  async function load(p: Principal, id: string): Promise<TicketRecord> {
    const t = await store.get(p.org._id, id);
    if (!t) throw ticketNotFound(id);
    return t;
  }

  return {
    load,

    async create(
      p: Principal,
      input: { subject: string; body: string; severity: TicketSeverity; deploymentId?: string | undefined },
    ): Promise<TicketRecord> {
      const orgId = p.org._id;
      if (input.deploymentId && !(await deps.deployments.get(orgId, input.deploymentId)))
        throw new AppError(
          'DEPLOYMENT_NOT_FOUND',
          `No deployment ${input.deploymentId} in this organisation; name one of yours, or leave deploymentId out.`,
          { deploymentId: input.deploymentId },
        );
      const now = new Date();
      const ticket: TicketRecord = {
        _id: randomUUID(),
        orgId,
        subject: input.subject,
        body: input.body,
        severity: input.severity,
        ...(input.deploymentId ? { deploymentId: input.deploymentId } : {}),
        authorId: p.user._id,
        createdAt: now,
        status: 'open',
        statusSeq: 0,
      };
      const maxPerDay = PLAN_POLICIES[p.org.plan].tickets.maxPerDay * deps.quotaMultiplier;
      await insertWithinPlan({
        lock: deps.lock,
        key: `tickets:${orgId}`,
        what: 'the ticket allowance',
        over: async () => {
          const count = await store.countSince(orgId, new Date(now.getTime() - DAY_MS));
          if (count < maxPerDay) return undefined;
          return new AppError(
            'QUOTA_EXCEEDED',
            `The ${p.org.plan} plan allows ${maxPerDay} tickets in 24 hours and this organisation has opened ${count}: add to an open ticket with a comment instead, or wait.`,
            { maxPerDay, count },
          );
        },
        insert: () => store.insert(ticket),
        taken: () => new AppError('CONFLICT', 'A ticket with this ID exists; retry.'),
      });
      // The opening is the first status event, so the history starts where the ticket did.
      await store.insertStatus({
        _id: randomUUID(),
        orgId,
        ticketId: ticket._id,
        seq: 0,
        from: null,
        to: 'open',
        by: p.user._id,
        at: now,
      });
      return ticket;
    },

    list: (
      p: Principal,
      q: { status?: TicketStatus | undefined; severity?: TicketSeverity | undefined; limit: number; offset: number },
    ) => store.list({ orgId: p.org._id, ...q }),

    /** The ticket, with its status as its newest event says, its comments and its status history, oldest first. */
    async detail(p: Principal, id: string) {
      const t = await load(p, id);
      const [history, comments] = await Promise.all([store.history(t._id), store.comments(t._id)]);
      const newest = history.at(-1);
      return { ticket: { ...t, status: newest?.to ?? t.status }, history, comments };
    },

    async comment(p: Principal, id: string, body: string) {
      const t = await load(p, id);
      const status = (await store.newestStatus(t._id))?.to ?? t.status;
      if (status === 'closed')
        throw new AppError(
          'CONFLICT',
          `Ticket ${id} is closed and takes no comments; reopen it first (PATCH with status "open") or open a new ticket.`,
          { ticketId: id, status },
        );
      const comment = {
        _id: randomUUID(),
        orgId: t.orgId,
        ticketId: t._id,
        body,
        authorId: p.user._id,
        at: new Date(),
      };
      await store.insertComment(comment);
      return comment;
    },

    /**
     * Moves the ticket to `to` from its newest status, if that transition is allowed. Two changes at once take
     * consecutive numbers: the second is judged again from the first's status, never lost nor applied blindly.
     */
    async setStatus(p: Principal, id: string, to: TicketStatus): Promise<TicketStatusEvent> {
      const t = await load(p, id);
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const newest = await store.newestStatus(t._id);
        const from = newest?.to ?? t.status;
        if (from === to)
          throw new AppError('CONFLICT', `Ticket ${id} is ${to} already.`, { ticketId: id, status: from });
        if (!TICKET_TRANSITIONS[from].includes(to))
          throw new AppError(
            'CONFLICT',
            `A ${from} ticket cannot become ${to}; from ${from} it may become ${TICKET_TRANSITIONS[from].join(' or ')}.`,
            { ticketId: id, status: from, allowed: TICKET_TRANSITIONS[from] },
          );
        if ((to === 'closed' || from === 'closed') && !mayClose(p, t))
          throw new AppError(
            'INSUFFICIENT_SCOPE',
            `Only owners, admins and the ticket's author may ${to === 'closed' ? 'close a ticket' : 'reopen a closed ticket'}; you may mark it ${TICKET_TRANSITIONS[from].filter((s) => s !== 'closed').join(' or ') || 'nothing else'}.`,
            { ticketId: id, status: from },
          );
        const event: TicketStatusEvent = {
          _id: randomUUID(),
          orgId: t.orgId,
          ticketId: t._id,
          seq: (newest?.seq ?? t.statusSeq) + 1,
          from,
          to,
          by: p.user._id,
          at: new Date(),
        };
        try {
          await store.insertStatus(event);
        } catch (err) {
          if (isDuplicateKey(err)) continue;
          throw err;
        }
        await store.noteStatus(t._id, to, event.seq);
        return event;
      }
      throw new AppError('CONFLICT', `Ticket ${id}'s status kept changing meanwhile; read it again and retry.`);
    },
  };
}

export type TicketService = ReturnType<typeof createTicketService>;
