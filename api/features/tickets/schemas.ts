import { z } from 'zod';

import { TICKET_SEVERITIES, TICKET_STATUSES, TICKET_TRANSITIONS } from '@shared/tickets/types';

import { queryInt, text } from '../../http/fields';

export const SUBJECT_MAX = 200;
export const BODY_MAX = 20_000;

const transitions = Object.entries(TICKET_TRANSITIONS)
  .map(([from, to]) => `${from} → ${to.join(', ')}`)
  .join('; ');

export const CreateTicketRequest = z
  .object({
    subject: text(SUBJECT_MAX).meta({ description: `At most ${SUBJECT_MAX} characters, stored and returned as given` }),
    body: text(BODY_MAX).meta({
      description: `What happened, at most ${BODY_MAX} characters: plain text, stored as given and returned as JSON (never rendered as HTML)`,
    }),
    severity: z.enum(TICKET_SEVERITIES).default('normal'),
    deploymentId: z
      .uuid('a deployment ID in UUID format')
      .optional()
      .meta({ description: 'The deployment it is about: one of the organisation’s' }),
  })
  .strict()
  .meta({ id: 'CreateTicketRequest' });

export const CommentRequest = z
  .object({ body: text(BODY_MAX).meta({ description: `At most ${BODY_MAX} characters, stored as given` }) })
  .strict()
  .meta({ id: 'TicketCommentRequest' });

export const UpdateTicketRequest = z
  .object({
    status: z.enum(TICKET_STATUSES).meta({
      description: `The new status. Allowed changes: ${transitions}. Closing, and reopening a closed ticket, are for owners, admins and the ticket’s author (403 otherwise); any other change is open to members who may comment. A change the current status does not allow is 409 CONFLICT naming the allowed ones.`,
    }),
  })
  .strict()
  .meta({ id: 'UpdateTicketRequest' });

export const TicketIdParams = z.object({ id: z.uuid('a ticket ID in UUID format') });

export const TicketListQuery = z
  .object({
    status: z.enum(TICKET_STATUSES).optional(),
    severity: z.enum(TICKET_SEVERITIES).optional(),
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, 1_000_000).default(0),
  })
  .strict();

const Person = z.object({ id: z.string(), email: z.string().nullable() }).meta({ id: 'TicketPerson' });

export const Ticket = z
  .object({
    id: z.uuid(),
    subject: z.string(),
    body: z.string(),
    severity: z.enum(TICKET_SEVERITIES),
    status: z.enum(TICKET_STATUSES),
    deploymentId: z.string().nullable(),
    author: Person,
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Ticket' });

export const TicketComment = z
  .object({ id: z.uuid(), ticketId: z.uuid(), body: z.string(), author: Person, at: z.iso.datetime() })
  .meta({ id: 'TicketComment' });

export const TicketStatusChange = z
  .object({
    ticketId: z.uuid(),
    from: z.enum(TICKET_STATUSES).nullable().meta({ description: 'null for the opening' }),
    to: z.enum(TICKET_STATUSES),
    by: Person,
    at: z.iso.datetime(),
  })
  .meta({ id: 'TicketStatusChange' });

export const TicketDetail = Ticket.extend({
  comments: z.array(TicketComment).meta({ description: 'Oldest first' }),
  statusHistory: z.array(TicketStatusChange).meta({ description: 'Every change, oldest first, the opening included' }),
}).meta({ id: 'TicketDetail' });

export const TicketList = z
  .object({ tickets: z.array(Ticket), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'TicketList' });
