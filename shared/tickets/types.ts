export const TICKET_SEVERITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type TicketSeverity = (typeof TICKET_SEVERITIES)[number];

export const TICKET_STATUSES = ['open', 'pending', 'resolved', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

/**
 * Which status may follow which. pending: waiting on the organisation; resolved: answered, may be reopened; closed:
 * done, reopened only by those who may close (owners, admins and the ticket's author).
 */
export const TICKET_TRANSITIONS: Record<TicketStatus, readonly TicketStatus[]> = {
  open: ['pending', 'resolved', 'closed'],
  pending: ['open', 'resolved', 'closed'],
  resolved: ['open', 'closed'],
  closed: ['open'],
};

/**
 * A support ticket as opened: never changed afterwards but for its `status` and `statusSeq`, a copy of its newest
 * status event kept for lists to filter on. The events (ticket_status) are what a ticket's status is.
 */
export interface TicketRecord {
  _id: string;
  orgId: string;
  subject: string;
  body: string;
  severity: TicketSeverity;
  deploymentId?: string;
  authorId: string;
  createdAt: Date;
  status: TicketStatus;
  statusSeq: number;
}

/** One status change, immutable: `seq` is unique per ticket, so two changes from the same status cannot both land. */
export interface TicketStatusEvent {
  _id: string;
  orgId: string;
  ticketId: string;
  seq: number;
  /** null for the ticket's opening. */
  from: TicketStatus | null;
  to: TicketStatus;
  by: string;
  at: Date;
}

/** A comment, immutable. */
export interface TicketComment {
  _id: string;
  orgId: string;
  ticketId: string;
  body: string;
  authorId: string;
  at: Date;
}
