import type { UserRecord } from '@shared/identity/store';
import type { TicketComment, TicketRecord, TicketStatusEvent } from '@shared/tickets/types';

/** The e-mail of each user named, read once per answer; a user since removed shows without one. */
export type People = Map<string, Pick<UserRecord, 'email'>>;

const person = (people: People, id: string) => ({ id, email: people.get(id)?.email ?? null });

/** Subject, body and comments exactly as given: JSON carries them, nothing of ours renders them. */
export const ticketView = (t: TicketRecord, people: People) => ({
  id: t._id,
  subject: t.subject,
  body: t.body,
  severity: t.severity,
  status: t.status,
  deploymentId: t.deploymentId ?? null,
  author: person(people, t.authorId),
  createdAt: t.createdAt.toISOString(),
});

export const commentView = (c: TicketComment, people: People) => ({
  id: c._id,
  ticketId: c.ticketId,
  body: c.body,
  author: person(people, c.authorId),
  at: c.at.toISOString(),
});

export const statusView = (e: TicketStatusEvent, people: People) => ({
  ticketId: e.ticketId,
  from: e.from,
  to: e.to,
  by: person(people, e.by),
  at: e.at.toISOString(),
});
