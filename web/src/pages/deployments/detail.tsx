import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, lazy, Suspense, useEffect, useMemo, useState } from 'react';
import { NavLink, useNavigate, useParams } from 'react-router';

import { call } from '../../api/client';
import { useApi, useChange, useEventStream } from '../../api/hooks';
import { useCan } from '../../api/session';
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
  TextField,
  Time,
  TypeToConfirm,
} from '../../ui';
import { ProjectName } from '../databases/shared';
import { DropZone, uploadZip } from './new';
import type { Deployment, LogLine, Release } from './types';
import { archiveOf } from './zip';

const MetricsChart = lazy(() => import('./metrics'));

type Filter = 'all' | 'build' | 'system' | 'app';
const kindOf = (l: LogLine): Exclude<Filter, 'all'> =>
  l.stream === 'build' || l.stream === 'system' ? l.stream : 'app';
const MAX_LINES = 500;

/** One deployment: its status, build and output live (one event stream), releases, health, use and controls. */
export function DeploymentDetail() {
  const { id = '' } = useParams();
  const can = useCan();
  const client = useQueryClient();
  const navigate = useNavigate();
  const base = `/platform/deployments/${id}`;
  const d = useApi<Deployment>(base);
  const [live, setLive] = useState<{ status: string; message: string } | null>(null);
  const [lines, setLines] = useState<LogLine[]>([]);
  const [gone, setGone] = useState(false);

  // History once; the stream adds what comes after (and replays the platform's own lines, deduplicated here).
  const history = useApi<{ lines: LogLine[] }>(`${base}/logs?limit=200`);
  useEffect(() => {
    if (history.data) setLines((now) => merge(history.data.lines, now));
  }, [history.data]);

  useEventStream(gone ? undefined : `${base}/events`, ['status', 'log', 'command', 'settled', 'destroyed'], (e) => {
    if (e.event === 'status') setLive(e.data as { status: string; message: string });
    else if (e.event === 'log') setLines((now) => merge(now, [e.data as LogLine]));
    else if (e.event === 'settled') {
      // Settled: what a status read shows (URL, releases) is read once more.
      void client.invalidateQueries({
        predicate: (q) => String(q.queryKey[0]).startsWith(base) && !String(q.queryKey[0]).includes('/logs'),
      });
    } else if (e.event === 'destroyed') setGone(true);
  });

  const destroy = useChange<void>('DELETE', base, {
    invalidates: ['/platform/deployments'],
    onSuccess: () => navigate('/deployments'),
  });

  if (d.isPending) return <Loading what="Loading the deployment" />;
  if (!d.data)
    return (
      <Page title="Deployment">
        <ErrorNote error={d.error} />
        <NavLink to="/deployments">Back to deployments</NavLink>
      </Page>
    );
  const dep = d.data;
  const status = live?.status ?? dep.status;
  const manage = can('deployment.manage');
  return (
    <Page title={dep.name}>
      {gone && <p role="status">This deployment was destroyed.</p>}
      <Section title="Overview">
        <Facts
          items={[
            ['Status', <StatusBadge key="s" status={status} />],
            ['What happened', live?.message ?? dep.events.at(-1)?.message ?? '—'],
            ['URL', dep.url ? <a href={dep.url}>{dep.url}</a> : <span className="muted">none yet</span>],
            ['Project', <ProjectName key="p" id={dep.projectId} />],
            [
              'Source',
              dep.source.type === 'image'
                ? `image ${dep.source.image}`
                : dep.source.type === 'git'
                  ? `Git ${dep.source.repoUrl}`
                  : 'uploaded archive',
            ],
            ['Instances', String(dep.replicas ?? '—')],
            ['Updated', <Time key="u" iso={dep.updatedAt} />],
          ]}
        />
        {(dep.lastFailure ?? dep.error) && <p className="error-note">{(dep.lastFailure ?? dep.error)!.message}</p>}
      </Section>
      <Logs lines={lines} error={history.error} />
      <Releases base={base} manage={manage} />
      {manage && <ShipRelease base={base} dep={dep} />}
      {manage && <Controls base={base} replicas={dep.replicas} />}
      <Health base={base} />
      <Section title="Resource use">
        <Suspense fallback={<Loading what="Loading the chart" />}>
          <MetricsChart id={id} />
        </Suspense>
      </Section>
      <Section title="Environment variables">
        {dep.envVarNames.length === 0 ? (
          <Empty>No environment variables. Ship a release with new ones through the API or CLI.</Empty>
        ) : (
          <>
            <p>Names only: values are never shown.</p>
            <ul aria-label="Environment variable names">
              {dep.envVarNames.map((n) => (
                <li key={n}>
                  <code>{n}</code>
                </li>
              ))}
            </ul>
          </>
        )}
      </Section>
      {manage && (
        <Section title="Danger zone">
          <TypeToConfirm
            label="Destroy deployment"
            name={dep.name}
            what="Stops every instance and releases everything it held: permanent, its URL answers nothing after."
            onConfirm={() => destroy.mutate()}
            busy={destroy.isPending}
            error={destroy.error}
          />
        </Section>
      )}
    </Page>
  );
}

/** Lines in time order, each once (the stream replays what the history already had). */
function merge(a: LogLine[], b: LogLine[]): LogLine[] {
  const seen = new Set<string>();
  const out: LogLine[] = [];
  for (const l of [...a, ...b]) {
    const key = `${l.timestamp}|${l.stream}|${l.instance ?? ''}|${l.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(l);
  }
  out.sort((x, y) => x.timestamp.localeCompare(y.timestamp));
  return out.slice(-MAX_LINES);
}

function Logs({ lines, error }: { lines: LogLine[]; error: unknown }) {
  const [filter, setFilter] = useState<Filter>('all');
  const shown = useMemo(() => lines.filter((l) => filter === 'all' || kindOf(l) === filter), [lines, filter]);
  return (
    <Section title="Logs">
      <SelectField
        label="Show"
        value={filter}
        onChange={(e) => setFilter(e.target.value as Filter)}
        options={[
          { value: 'all', label: 'Everything' },
          { value: 'build', label: 'Build' },
          { value: 'app', label: 'App output' },
          { value: 'system', label: 'System' },
        ]}
      />
      <ErrorNote error={error} />
      <div className="deployments-log" role="log" aria-label="Log lines" tabIndex={0}>
        {shown.length === 0 ? (
          <p className="muted">No lines yet.</p>
        ) : (
          shown.map((l, i) => (
            <div key={`${l.timestamp}-${i}`}>
              <span className="muted">{l.timestamp.slice(11, 19)}</span> <span>[{l.instance ?? l.stream}]</span>{' '}
              {l.message}
            </div>
          ))
        )}
      </div>
    </Section>
  );
}

function Releases({ base, manage }: { base: string; manage: boolean }) {
  const releases = useApi<{ releases: Release[]; total: number }>(`${base}/releases?limit=20`);
  const rollback = useChange<number>('POST', `${base}/rollback`, {
    invalidates: [base],
    body: (revision) => ({ revision }),
  });
  return (
    <Section title="Releases">
      <ErrorNote error={releases.error ?? rollback.error} />
      {rollback.isSuccess && <p role="status">Rollback accepted: the status above follows it.</p>}
      <DataTable
        caption="Releases"
        rows={releases.data?.releases}
        rowKey={(r) => String(r.revision)}
        empty="No release yet: the first one appears once the build is done."
        columns={[
          { header: 'Release', cell: (r) => `r${r.revision}` },
          {
            header: 'How',
            cell: (r) => (r.trigger === 'rollback' && r.rollbackOf ? `rollback to r${r.rollbackOf}` : r.trigger),
          },
          { header: 'Status', cell: (r) => <StatusBadge status={r.status} /> },
          { header: 'Created', cell: (r) => <Time iso={r.createdAt} /> },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (r) =>
              manage && r.readyAt && r.status !== 'active' ? (
                <Button busy={rollback.isPending} onClick={() => rollback.mutate(r.revision)}>
                  Roll back to r{r.revision}
                </Button>
              ) : null,
          },
        ]}
      />
    </Section>
  );
}

function ShipRelease({ base, dep }: { base: string; dep: Deployment }) {
  const client = useQueryClient();
  const [image, setImage] = useState('');
  const [files, setFiles] = useState<{ path: string; file: File }[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);
  const ship = async (body: () => Promise<Record<string, unknown>>) => {
    setBusy(true);
    setError(null);
    setDone(false);
    try {
      await call('POST', `${base}/redeploy`, { body: await body() });
      setDone(true);
      await client.invalidateQueries({ predicate: (q) => String(q.queryKey[0]).startsWith(`${base}/releases`) });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const same = () =>
    ship(async () =>
      dep.source.type === 'image'
        ? { image: dep.source.image }
        : dep.source.type === 'git'
          ? { git: {} }
          : { uploadId: dep.source.uploadId },
    );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void ship(async () => {
      if (files.length > 0) return { uploadId: await uploadZip(await archiveOf(files)) };
      if (image) return { image };
      throw new Error('Give an image, or drop or choose a zip, files or a folder.');
    });
  };
  return (
    <Section title="Ship a new release">
      <Button onClick={() => void same()} busy={busy}>
        Redeploy the same source
      </Button>
      <form onSubmit={submit}>
        <TextField label="New image" value={image} onChange={(e) => setImage(e.target.value)} hint="e.g. nginx:1.27" />
        <DropZone label="Drop zone for the new release's files" onFiles={setFiles} />
        {files.length > 0 && <p>{files.length} file(s) chosen for the new release.</p>}
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={busy}>
            Ship release
          </Button>
        </div>
      </form>
      <ErrorNote error={error} />
      {done && <p role="status">New release accepted: the status above follows it.</p>}
    </Section>
  );
}

function Controls({ base, replicas }: { base: string; replicas: number | undefined }) {
  const [count, setCount] = useState(String(replicas ?? 1));
  const stop = useChange<void>('POST', `${base}/stop`, { invalidates: [base] });
  const start = useChange<void>('POST', `${base}/start`, { invalidates: [base] });
  const scale = useChange<void>('POST', `${base}/scale`, {
    invalidates: [base],
    body: () => ({ replicas: Number(count) }),
  });
  return (
    <Section title="Run">
      <div className="form-actions">
        <Button onClick={() => stop.mutate()} busy={stop.isPending}>
          Stop
        </Button>
        <Button onClick={() => start.mutate()} busy={start.isPending}>
          Start
        </Button>
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          scale.mutate();
        }}
      >
        <TextField label="Instances" inputMode="numeric" value={count} onChange={(e) => setCount(e.target.value)} />
        <Button type="submit" busy={scale.isPending}>
          Scale
        </Button>
      </form>
      <ErrorNote error={stop.error ?? start.error ?? scale.error} />
    </Section>
  );
}

function Health({ base }: { base: string }) {
  // The probe reaches every instance: read when asked, not on every visit.
  const [asked, setAsked] = useState(false);
  const health = useApi<{ overall: string; instances: { name: string; state: string; restarts: number }[] }>(
    `${base}/health`,
    { enabled: asked },
  );
  return (
    <Section title="Health">
      <Button onClick={() => (asked ? void health.refetch() : setAsked(true))} busy={health.isFetching}>
        Check health now
      </Button>
      <ErrorNote error={health.error} />
      {health.data && (
        <>
          <p>
            Overall: <StatusBadge status={health.data.overall} />
          </p>
          <DataTable
            caption="Instances"
            rows={health.data.instances}
            rowKey={(i) => i.name}
            empty="No instance is meant to run."
            columns={[
              { header: 'Instance', cell: (i) => i.name },
              { header: 'State', cell: (i) => <StatusBadge status={i.state} /> },
              { header: 'Restarts', cell: (i) => String(i.restarts) },
            ]}
          />
        </>
      )}
    </Section>
  );
}
