import type { Principal } from '@shared/identity/service';

import { noteAudit } from '../../http/audit';
import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { TicketsContext } from './compose';
import {
  CommentRequest,
  CreateTicketRequest,
  Ticket,
  TicketComment,
  TicketDetail,
  TicketIdParams,
  TicketList,
  TicketListQuery,
  TicketStatusChange,
  UpdateTicketRequest,
} from './schemas';
import { commentView, type People, statusView, ticketView } from './views';

/** Support tickets of the organisation: members read and write them, viewers read them. */
export function ticketRoutes(ctx: Pick<TicketsContext, 'tickets' | 'identity' | 'can'>): RouteDef[] {
  const { tickets, can, identity } = ctx;
  const tags = ['Support tickets'];
  const people = async (p: Principal, ids: string[]): Promise<People> =>
    new Map((await identity.listUsers(p.org._id, [...new Set(ids)])).map((u) => [u._id, u]));
  return [
    route({
      method: 'post',
      path: '/tickets',
      summary: 'Open a support ticket',
      description:
        'Opened as status open, by the caller. The plan allows a number of tickets in any 24 hours (free 10, pro 50, enterprise 200); past it, 429 QUOTA_EXCEEDED: comment on an open ticket instead.',
      tags,
      request: { body: CreateTicketRequest },
      before: [can('ticket.create')],
      responses: {
        201: { description: 'The ticket', schema: success(Ticket) },
        404: { description: 'DEPLOYMENT_NOT_FOUND: deploymentId is not one of the organisation’s' },
        429: { description: 'QUOTA_EXCEEDED: the plan’s tickets in 24 hours' },
      },
      audit: { idField: 'id' },
      handler: async ({ body }, req, res) => {
        const p = principalOf(req);
        const t = await tickets.create(p, body);
        res.status(201).json(ok(ticketView(t, await people(p, [t.authorId]))));
      },
    }),
    route({
      method: 'get',
      path: '/tickets',
      summary: 'The organisation’s tickets, newest first, filtered by status or severity',
      tags,
      request: { query: TicketListQuery },
      before: [can('ticket.read')],
      responses: { 200: { description: 'A page of tickets', schema: success(TicketList) } },
      handler: async ({ query }, req, res) => {
        const p = principalOf(req);
        const { items, total } = await tickets.list(p, query);
        const who = await people(
          p,
          items.map((t) => t.authorId),
        );
        res.json(
          ok({ tickets: items.map((t) => ticketView(t, who)), total, limit: query.limit, offset: query.offset }),
        );
      },
    }),
    route({
      method: 'get',
      path: '/tickets/:id',
      summary: 'A ticket with its comments and its status history',
      tags,
      request: { params: TicketIdParams },
      before: [can('ticket.read')],
      responses: {
        200: { description: 'The ticket', schema: success(TicketDetail) },
        404: { description: 'TICKET_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        const p = principalOf(req);
        const { ticket, history, comments } = await tickets.detail(p, params.id);
        const who = await people(p, [ticket.authorId, ...comments.map((c) => c.authorId), ...history.map((e) => e.by)]);
        res.json(
          ok({
            ...ticketView(ticket, who),
            comments: comments.map((c) => commentView(c, who)),
            statusHistory: history.map((e) => statusView(e, who)),
          }),
        );
      },
    }),
    route({
      method: 'post',
      path: '/tickets/:id/comments',
      summary: 'Comment on a ticket (not on a closed one: reopen it first)',
      tags,
      request: { params: TicketIdParams, body: CommentRequest },
      before: [can('ticket.create')],
      responses: {
        201: { description: 'The comment', schema: success(TicketComment) },
        404: { description: 'TICKET_NOT_FOUND' },
        409: { description: 'CONFLICT: the ticket is closed' },
      },
      audit: { action: 'ticket.comment', resource: 'ticket', idField: 'ticketId' },
      handler: async ({ params, body }, req, res) => {
        const p = principalOf(req);
        const c = await tickets.comment(p, params.id, body.body);
        res.status(201).json(ok(commentView(c, await people(p, [c.authorId]))));
      },
    }),
    route({
      method: 'patch',
      path: '/tickets/:id',
      summary: 'Change a ticket’s status',
      description: UpdateTicketRequest.shape.status.description ?? '',
      tags,
      request: { params: TicketIdParams, body: UpdateTicketRequest },
      before: [can('ticket.create')],
      responses: {
        200: { description: 'The change', schema: success(TicketStatusChange) },
        403: { description: 'INSUFFICIENT_SCOPE: closing or reopening a closed ticket is not yours to do' },
        404: { description: 'TICKET_NOT_FOUND' },
        409: { description: 'CONFLICT: the ticket has that status already, or may not move to it from its own' },
      },
      handler: async ({ params, body }, req, res) => {
        const p = principalOf(req);
        const e = await tickets.setStatus(p, params.id, body.status);
        noteAudit(res, { changes: [{ field: 'status', from: e.from, to: e.to }] });
        res.json(ok(statusView(e, await people(p, [e.by]))));
      },
    }),
  ];
}
