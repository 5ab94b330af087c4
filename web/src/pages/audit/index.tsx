import { type FormEvent, useState } from 'react';
import { useSearchParams } from 'react-router';

import { qs } from '../../api/client';
import { useApi } from '../../api/hooks';
import {
  Button,
  DataTable,
  ErrorNote,
  Loading,
  Page,
  Section,
  SelectField,
  StatusBadge,
  TextField,
  Time,
} from '../../ui';

// GET /platform/audit (api/features/audit/schemas.ts, AuditPage).
interface AuditEvent {
  id: string;
  at: string;
  projectId: string | null;
  actor: { type: string; userId: string | null; tokenId: string | null };
  action: string;
  resource: { type: string; id: string | null };
  changes: Array<{ field: string; from: unknown; to: unknown }> | null;
  outcome: 'success' | 'failure' | 'denied';
  status: number;
  origin: string;
  ip: string | null;
  requestId: string;
}

/** The filters the route takes, kept in the page's query string so a filtered view can be shared and reloaded. */
const FILTERS = ['action', 'actor', 'resourceType', 'resourceId', 'projectId', 'outcome', 'since', 'until'] as const;
type Filter = (typeof FILTERS)[number];
const PAGE_SIZE = 50;

/** `<input type="datetime-local">` speaks local time without a zone; the api wants ISO 8601. */
const toIso = (local: string) => (local ? new Date(local).toISOString() : '');
const toLocal = (iso: string | null) => {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
};

export default function AuditPage() {
  const [params, setParams] = useSearchParams();
  const applied = Object.fromEntries(FILTERS.map((f) => [f, params.get(f) ?? ''])) as Record<Filter, string>;
  const cursor = params.get('cursor') ?? '';
  const page = useApi<{ events: AuditEvent[]; nextCursor: string | null }>(
    '/platform/audit' + qs({ ...applied, cursor, limit: PAGE_SIZE }),
  );
  const [draft, setDraft] = useState({
    ...applied,
    since: toLocal(applied.since || null),
    until: toLocal(applied.until || null),
  });
  const set = (f: Filter) => (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [f]: e.target.value }));

  function apply(e: FormEvent) {
    e.preventDefault();
    const next = new URLSearchParams();
    for (const f of FILTERS) {
      const v = f === 'since' || f === 'until' ? toIso(draft[f]) : draft[f].trim();
      if (v) next.set(f, v);
    }
    setParams(next);
  }
  function clear() {
    setDraft(Object.fromEntries(FILTERS.map((f) => [f, ''])) as Record<Filter, string>);
    setParams(new URLSearchParams());
  }
  function older(next: string) {
    const p = new URLSearchParams(params);
    p.set('cursor', next);
    setParams(p);
  }
  function newest() {
    const p = new URLSearchParams(params);
    p.delete('cursor');
    setParams(p);
  }

  return (
    <Page title="Audit trail">
      <p className="muted">
        Every change made in the organisation, by any client (console, API, CLI, agents), with its outcome: success,
        failure, or denied. Newest first; events hold no request bodies and never a secret.
      </p>
      <Section title="Filters">
        <form onSubmit={apply}>
          <div className="audit-filters">
            <TextField
              label="Action"
              placeholder="project.update"
              value={draft.action}
              onChange={set('action')}
              hint="Exact, such as secret.create."
            />
            <TextField label="Actor" value={draft.actor} onChange={set('actor')} hint="A user ID or a token ID." />
            <TextField
              label="Resource type"
              placeholder="deployment"
              value={draft.resourceType}
              onChange={set('resourceType')}
            />
            <TextField label="Resource ID" value={draft.resourceId} onChange={set('resourceId')} />
            <TextField label="Project ID" value={draft.projectId} onChange={set('projectId')} />
            <SelectField
              label="Outcome"
              value={draft.outcome}
              onChange={set('outcome')}
              options={[
                { value: '', label: 'Any' },
                { value: 'success', label: 'Success' },
                { value: 'failure', label: 'Failure' },
                { value: 'denied', label: 'Denied' },
              ]}
            />
            <TextField label="From" type="datetime-local" value={draft.since} onChange={set('since')} />
            <TextField label="Until" type="datetime-local" value={draft.until} onChange={set('until')} />
          </div>
          <div className="form-actions">
            <Button type="submit" variant="primary">
              Apply filters
            </Button>
            <Button onClick={clear}>Clear filters</Button>
          </div>
        </form>
      </Section>
      <Section title="Events">
        {page.isLoading && <Loading />}
        <ErrorNote error={page.error} />
        <DataTable
          caption="Audit events, newest first"
          rows={page.data?.events}
          rowKey={(e) => e.id}
          empty={
            FILTERS.some((f) => applied[f])
              ? 'No event matches these filters: widen the time range or clear a filter.'
              : 'No events yet: changes made in the organisation appear here.'
          }
          columns={[
            { header: 'Time', cell: (e) => <Time iso={e.at} /> },
            { header: 'Action', cell: (e) => <code>{e.action}</code> },
            {
              header: 'Actor',
              cell: (e) => (
                <span className="mono">
                  {e.actor.type}
                  {e.actor.userId ? ` ${e.actor.userId}` : ''}
                </span>
              ),
            },
            {
              header: 'Resource',
              cell: (e) => (
                <span className="mono">
                  {e.resource.type}
                  {e.resource.id ? ` ${e.resource.id}` : ''}
                </span>
              ),
            },
            {
              header: 'Outcome',
              cell: (e) => (
                <>
                  <StatusBadge status={e.outcome} /> <span className="muted">HTTP {e.status}</span>
                </>
              ),
            },
            { header: 'Origin', cell: (e) => e.origin },
            {
              header: 'Changes',
              cell: (e) =>
                e.changes?.length
                  ? e.changes.map((c) => `${c.field}: ${JSON.stringify(c.from)} → ${JSON.stringify(c.to)}`).join('; ')
                  : '—',
            },
          ]}
        />
        <nav className="form-actions" aria-label="Pages of events">
          <Button disabled={!cursor} onClick={newest}>
            Newest
          </Button>
          <Button
            disabled={!page.data?.nextCursor}
            onClick={() => page.data?.nextCursor && older(page.data.nextCursor)}
          >
            Older
          </Button>
        </nav>
      </Section>
    </Page>
  );
}
