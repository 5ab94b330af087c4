import { useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';

import { qs } from '../../api/client';
import { useApi, useChange } from '../../api/hooks';
import { useCan, useMe } from '../../api/session';
import {
  Button,
  DataTable,
  Empty,
  ErrorNote,
  Facts,
  Loading,
  Page,
  Section,
  SelectField,
  StatusBadge,
  TextArea,
  TextField,
  Time,
} from '../../ui';

/** The shapes of api/features/tickets/schemas.ts and the transitions of shared/tickets/types.ts. */
const SEVERITIES = ['low', 'normal', 'high', 'urgent'] as const;
const STATUSES = ['open', 'pending', 'resolved', 'closed'] as const;
type Status = (typeof STATUSES)[number];
const TRANSITIONS: Record<Status, readonly Status[]> = {
  open: ['pending', 'resolved', 'closed'],
  pending: ['open', 'resolved', 'closed'],
  resolved: ['open', 'closed'],
  closed: ['open'],
};
interface Person {
  id: string;
  email: string | null;
}
interface Ticket {
  id: string;
  subject: string;
  body: string;
  severity: (typeof SEVERITIES)[number];
  status: Status;
  deploymentId: string | null;
  author: Person;
  createdAt: string;
}
interface TicketDetail extends Ticket {
  comments: Array<{ id: string; body: string; author: Person; at: string }>;
  statusHistory: Array<{ from: Status | null; to: Status; by: Person; at: string }>;
}
interface TicketList {
  tickets: Ticket[];
  total: number;
}

export default function TicketsPage() {
  return (
    <Routes>
      <Route index element={<TicketListView />} />
      <Route path=":id" element={<TicketView />} />
    </Routes>
  );
}

function TicketListView() {
  const can = useCan();
  const [status, setStatus] = useState('');
  const list = useApi<TicketList>(`/platform/tickets${qs({ status, limit: 100 })}`);
  return (
    <Page title="Support tickets">
      {can('ticket.create') && <OpenTicket />}
      <Section title={list.data ? `Tickets (${list.data.total})` : 'Tickets'}>
        <SelectField
          label="Show"
          value={status}
          onChange={(e) => setStatus(e.target.value)}
          options={[{ value: '', label: 'every status' }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
        />
        {list.isPending && <Loading what="Loading tickets" />}
        <ErrorNote error={list.error} />
        <DataTable
          caption="Support tickets, newest first"
          rows={list.data?.tickets}
          rowKey={(t) => t.id}
          empty={status ? `No ${status} ticket.` : 'No ticket yet: open one above when something goes wrong.'}
          columns={[
            { header: 'Subject', cell: (t) => <Link to={t.id}>{t.subject}</Link> },
            { header: 'Status', cell: (t) => <StatusBadge status={t.status} /> },
            { header: 'Severity', cell: (t) => t.severity },
            { header: 'Author', cell: (t) => t.author.email ?? t.author.id },
            { header: 'Opened', cell: (t) => <Time iso={t.createdAt} /> },
          ]}
        />
      </Section>
    </Page>
  );
}

function OpenTicket() {
  const navigate = useNavigate();
  const [subject, setSubject] = useState('');
  const [body, setBody] = useState('');
  const [severity, setSeverity] = useState('normal');
  const [deploymentId, setDeploymentId] = useState('');
  const open = useChange<void, Ticket>('POST', '/platform/tickets', {
    invalidates: ['/platform/tickets'],
    body: () => ({ subject, body, severity, ...(deploymentId.trim() ? { deploymentId: deploymentId.trim() } : {}) }),
    onSuccess: (t) => navigate(t.id),
  });
  return (
    <Section title="Open a ticket">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          open.mutate();
        }}
      >
        <TextField
          label="Subject"
          required
          maxLength={200}
          value={subject}
          onChange={(e) => setSubject(e.target.value)}
        />
        <TextArea
          label="What happened"
          required
          rows={5}
          value={body}
          onChange={(e) => setBody(e.target.value)}
          hint="Plain text: what you did, what you expected, what you saw."
        />
        <SelectField
          label="Severity"
          value={severity}
          onChange={(e) => setSeverity(e.target.value)}
          options={SEVERITIES.map((s) => ({ value: s, label: s }))}
        />
        <TextField
          label="Deployment ID (optional)"
          value={deploymentId}
          onChange={(e) => setDeploymentId(e.target.value)}
          hint="The deployment it is about, if any."
        />
        <ErrorNote error={open.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={open.isPending}>
            Open ticket
          </Button>
        </div>
      </form>
    </Section>
  );
}

function TicketView() {
  const { id = '' } = useParams();
  const can = useCan();
  const me = useMe();
  const path = `/platform/tickets/${id}`;
  const ticket = useApi<TicketDetail>(path);
  const t = ticket.data;
  // Closing, and reopening a closed ticket, are for owners, admins and the author; the api decides in the end.
  const mayClose = t && (me.user.role === 'owner' || me.user.role === 'admin' || t.author.id === me.user.id);
  const allowed = t ? TRANSITIONS[t.status].filter((s) => mayClose || (s !== 'closed' && t.status !== 'closed')) : [];
  return (
    <Page title={t ? `Ticket: ${t.subject}` : 'Ticket'} actions={<Link to="..">All tickets</Link>}>
      {ticket.isPending && <Loading what="Loading the ticket" />}
      <ErrorNote error={ticket.error} />
      {t && (
        <>
          <Section title="Ticket">
            <Facts
              items={[
                ['Status', <StatusBadge key="s" status={t.status} />],
                ['Severity', t.severity],
                ['Author', t.author.email ?? t.author.id],
                ['Deployment', t.deploymentId ? <code key="d">{t.deploymentId}</code> : '—'],
                ['Opened', <Time key="o" iso={t.createdAt} />],
              ]}
            />
            <p className="tickets-body">{t.body}</p>
            {can('ticket.create') && allowed.length > 0 && <ChangeStatus path={path} allowed={allowed} />}
          </Section>
          <Section title={`Comments (${t.comments.length})`}>
            {t.comments.length === 0 ? (
              <Empty>No comment yet.</Empty>
            ) : (
              <ol className="tickets-thread">
                {t.comments.map((c) => (
                  <li key={c.id}>
                    <p className="muted">
                      {c.author.email ?? c.author.id} · <Time iso={c.at} />
                    </p>
                    <p className="tickets-body">{c.body}</p>
                  </li>
                ))}
              </ol>
            )}
            {can('ticket.create') &&
              (t.status === 'closed' ? (
                <p className="muted">The ticket is closed: reopen it to comment.</p>
              ) : (
                <AddComment path={path} />
              ))}
          </Section>
          <Section title="Status history">
            <ol className="tickets-thread">
              {t.statusHistory.map((h) => (
                <li key={`${h.at}-${h.to}`}>
                  {h.from ? `${h.from} → ${h.to}` : `opened (${h.to})`} by {h.by.email ?? h.by.id} · <Time iso={h.at} />
                </li>
              ))}
            </ol>
          </Section>
        </>
      )}
    </Page>
  );
}

function ChangeStatus({ path, allowed }: { path: string; allowed: Status[] }) {
  const [to, setTo] = useState<Status>(allowed[0]!);
  const target = allowed.includes(to) ? to : allowed[0]!;
  const change = useChange<void, Ticket>('PATCH', path, {
    invalidates: ['/platform/tickets'],
    body: () => ({ status: target }),
  });
  return (
    <form
      className="tickets-status"
      onSubmit={(e) => {
        e.preventDefault();
        change.mutate();
      }}
    >
      <SelectField
        label="New status"
        value={target}
        onChange={(e) => setTo(e.target.value as Status)}
        options={allowed.map((s) => ({ value: s, label: s }))}
      />
      <ErrorNote error={change.error} />
      <div className="form-actions">
        <Button type="submit" busy={change.isPending}>
          Change status
        </Button>
      </div>
    </form>
  );
}

function AddComment({ path }: { path: string }) {
  const [body, setBody] = useState('');
  const add = useChange<void>('POST', `${path}/comments`, {
    invalidates: [path],
    body: () => ({ body }),
    onSuccess: () => setBody(''),
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate();
      }}
    >
      <TextArea label="Comment" required rows={4} value={body} onChange={(e) => setBody(e.target.value)} />
      <ErrorNote error={add.error} />
      <div className="form-actions">
        <Button type="submit" variant="primary" busy={add.isPending}>
          Add comment
        </Button>
      </div>
    </form>
  );
}
