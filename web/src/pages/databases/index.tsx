import { type FormEvent, type ReactNode, useState } from 'react';
import { NavLink, Route, Routes, useNavigate, useParams } from 'react-router';

import { ApiError, call } from '../../api/client';
import { useApi, useChange } from '../../api/hooks';
import { useCan } from '../../api/session';
import {
  Button,
  DataTable,
  Dialog,
  ErrorNote,
  Facts,
  Loading,
  Page,
  SecretOnce,
  Section,
  SelectField,
  StatusBadge,
  TextField,
  Time,
  TypeToConfirm,
} from '../../ui';
import { DeploymentLink, formatBytes, intOrUndefined, ProjectName, ProjectSelect } from './shared';

interface Database {
  id: string;
  kind: 'service' | 'managed';
  engine: string;
  name: string;
  sizeGb: number;
  projectId: string | null;
  deploymentId: string | null;
  host: string;
  port: number;
  status: string;
  error: string | null;
  restoredFrom?: { backupId: string };
  createdAt: string;
}

interface Connection {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  url: string;
}

interface Backup {
  id: string;
  trigger: string;
  status: string;
  sizeBytes: number | null;
  sha256: string | null;
  error: string | null;
  createdAt: string;
  completedAt: string | null;
}

interface Schedule {
  cron: string;
  timezone: string;
  retain: { count?: number; days?: number };
  nextRunAt: string | null;
  paused: boolean;
}

const ENGINES: Record<string, string> = { postgresql: 'PostgreSQL', mariadb: 'MariaDB', redis: 'Redis' };

/** Databases: managed ones of a project, and the ones deployments run beside them. */
export default function DatabasesPage() {
  return (
    <Routes>
      <Route index element={<DatabaseList />} />
      <Route path=":id" element={<DatabaseDetail />} />
    </Routes>
  );
}

function DatabaseList() {
  const can = useCan();
  const list = useApi<{ databases: Database[] }>('/platform/databases?limit=100');
  return (
    <Page title="Databases">
      <Section title="Your databases">
        {list.isPending ? (
          <Loading what="Loading databases" />
        ) : (
          <>
            <ErrorNote error={list.error} />
            <DataTable
              caption="Databases"
              rows={list.data?.databases}
              rowKey={(d) => d.id}
              empty="No databases yet. Create a managed database below and link it to a project’s deployments."
              columns={[
                { header: 'Name', cell: (d) => <NavLink to={`/databases/${d.id}`}>{d.name}</NavLink> },
                { header: 'Engine', cell: (d) => ENGINES[d.engine] ?? d.engine },
                {
                  header: 'Kind',
                  cell: (d) =>
                    d.kind === 'service' && d.deploymentId ? (
                      <>
                        beside <DeploymentLink id={d.deploymentId} />
                      </>
                    ) : (
                      'managed'
                    ),
                },
                { header: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
                { header: 'Size', cell: (d) => `${d.sizeGb} GB` },
                { header: 'Project', cell: (d) => <ProjectName id={d.projectId} /> },
              ]}
            />
          </>
        )}
      </Section>
      {can('database.create') && <CreateDatabase />}
    </Page>
  );
}

function CreateDatabase() {
  const navigate = useNavigate();
  const [engine, setEngine] = useState('postgresql');
  const [name, setName] = useState('');
  const [size, setSize] = useState('1');
  const [projectId, setProjectId] = useState('');
  const create = useChange<void, Database>('POST', '/platform/databases', {
    invalidates: ['/platform/databases'],
    body: () => ({ engine, name, sizeGb: intOrUndefined(size), ...(projectId ? { projectId } : {}) }),
    onSuccess: (d) => navigate(`/databases/${d.id}`),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Section title="Create a managed database">
      <form onSubmit={submit} noValidate>
        <SelectField
          label="Engine"
          value={engine}
          onChange={(e) => setEngine(e.target.value)}
          options={Object.entries(ENGINES).map(([value, label]) => ({ value, label }))}
        />
        <TextField
          label="Name"
          hint="Lowercase letters, digits and “-”, unique among the organisation’s managed databases."
          value={name}
          onChange={(e) => setName(e.target.value)}
          autoComplete="off"
        />
        <TextField label="Size (GB)" type="number" min={1} value={size} onChange={(e) => setSize(e.target.value)} />
        <ProjectSelect
          value={projectId}
          onChange={setProjectId}
          required
          hint="A managed database belongs to a project; its deployments can be linked to it."
        />
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create database
          </Button>
        </div>
      </form>
    </Section>
  );
}

function DatabaseDetail() {
  const { id = '' } = useParams();
  const can = useCan();
  const navigate = useNavigate();
  const base = `/platform/databases/${id}`;
  const d = useApi<Database>(base);
  const remove = useChange<void>('DELETE', base, {
    invalidates: ['/platform/databases'],
    onSuccess: () => navigate('/databases'),
  });
  if (d.isPending) return <Loading what="Loading the database" />;
  if (!d.data)
    return (
      <Page title="Database">
        <ErrorNote error={d.error} />
        <NavLink to="/databases">Back to databases</NavLink>
      </Page>
    );
  const db = d.data;
  return (
    <Page
      title={`Database ${db.name}`}
      actions={
        can('database.delete') && (
          <TypeToConfirm
            label="Delete database"
            name={db.name}
            what="Its data and its backups are removed for good. A managed database linked to a deployment is refused until it is unlinked."
            onConfirm={() => remove.mutate()}
            busy={remove.isPending}
            error={remove.error}
          />
        )
      }
    >
      <p>
        <NavLink to="/databases">All databases</NavLink>
      </p>
      <Section title="Details">
        <Facts
          items={[
            ['Status', <StatusBadge key="s" status={db.status} />],
            ['Engine', ENGINES[db.engine] ?? db.engine],
            ['Kind', db.kind],
            ...(db.deploymentId
              ? ([['Deployment', <DeploymentLink key="d" id={db.deploymentId} />]] as Array<[string, ReactNode]>)
              : []),
            ['Host', <code key="h">{`${db.host}:${db.port}`}</code>],
            ['Size', `${db.sizeGb} GB`],
            ['Project', <ProjectName key="p" id={db.projectId} />],
            ['Created', <Time key="c" iso={db.createdAt} />],
          ]}
        />
        {db.error && <p className="error-note">{db.error}</p>}
      </Section>
      <ConnectionInfo db={db} />
      <Backups db={db} base={base} />
      <BackupSchedule base={base} />
      {db.kind === 'managed' && <Snapshots db={db} base={base} />}
      {db.kind === 'managed' && <Links base={base} />}
    </Page>
  );
}

/**
 * The credentials are read only when the person asks (each read is in the audit trail), kept in this component's
 * state, and dropped on Hide or when the page is left; they are never cached.
 */
function ConnectionInfo({ db }: { db: Database }) {
  const can = useCan();
  const [conn, setConn] = useState<Connection | undefined>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const reveal = async () => {
    setBusy(true);
    setError(undefined);
    try {
      setConn(await call<Connection>('GET', `/platform/databases/${db.id}/connection`));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Section title="Connection">
      <p>
        Deployments of the organisation reach it at <code>{`${db.host}:${db.port}`}</code>.{' '}
        {db.kind === 'managed'
          ? 'Link a deployment below to give it the URL as an environment variable.'
          : 'Its deployment reads the URL from its environment.'}
      </p>
      {can('database.reveal') &&
        (conn ? (
          <>
            <SecretOnce label="Connection URL" value={conn.url} />
            <Facts
              items={[
                ['User', <code key="u">{conn.user}</code>],
                ['Database', <code key="d">{conn.database}</code>],
              ]}
            />
            <Button onClick={() => setConn(undefined)}>Hide credentials</Button>
          </>
        ) : (
          <>
            <p className="hint">Showing the credentials is recorded in the audit trail.</p>
            <Button onClick={() => void reveal()} busy={busy}>
              Reveal credentials
            </Button>
          </>
        ))}
      <ErrorNote error={error} />
    </Section>
  );
}

function Backups({ db, base }: { db: Database; base: string }) {
  const can = useCan();
  const list = useApi<{ backups: Backup[] }>(`${base}/backups?limit=50`);
  const take = useChange<void, Backup>('POST', `${base}/backups`, {
    invalidates: [`${base}/backups`],
    body: () => ({}),
  });
  const [restoring, setRestoring] = useState<Backup | undefined>();
  const [deleting, setDeleting] = useState<Backup | undefined>();
  const remove = useChange<string>('DELETE', (bid) => `${base}/backups/${bid}`, {
    invalidates: [`${base}/backups`],
  });
  return (
    <Section
      title="Backups"
      actions={
        can('database.backup') && (
          <Button onClick={() => take.mutate()} busy={take.isPending}>
            Back up now
          </Button>
        )
      }
    >
      <ErrorNote error={take.error} />
      {take.data && <p role="status">A backup is running; reload the list to see it complete.</p>}
      <ErrorNote error={list.error} />
      <DataTable
        caption="Backups"
        rows={list.data?.backups}
        rowKey={(b) => b.id}
        empty="No backups yet. Back up now, or set a schedule below."
        columns={[
          { header: 'Taken', cell: (b) => <Time iso={b.createdAt} /> },
          { header: 'Trigger', cell: (b) => b.trigger },
          { header: 'Status', cell: (b) => <StatusBadge status={b.status} /> },
          { header: 'Size', cell: (b) => formatBytes(b.sizeBytes) },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (b) => (
              <div className="page-actions">
                {can('database.restore') && b.status === 'complete' && (
                  <Button aria-label={`Restore the backup of ${b.createdAt}`} onClick={() => setRestoring(b)}>
                    Restore…
                  </Button>
                )}
                {can('database.delete') && b.status !== 'running' && (
                  <Button
                    variant="danger"
                    aria-label={`Delete the backup of ${b.createdAt}`}
                    onClick={() => setDeleting(b)}
                  >
                    Delete
                  </Button>
                )}
              </div>
            ),
          },
        ]}
      />
      <div className="form-actions">
        <Button onClick={() => void list.refetch()} busy={list.isFetching}>
          Reload backups
        </Button>
      </div>
      {restoring && (
        <RestoreDialog
          db={db}
          path={`${base}/backups/${restoring.id}/restore`}
          inPlace
          onClose={() => setRestoring(undefined)}
        />
      )}
      <ErrorNote error={remove.error} />
      {deleting && (
        <ConfirmDelete
          title="Delete the backup?"
          description="The backup and its stored dump are removed for good; the database is not touched."
          label="Delete backup"
          busy={remove.isPending}
          onCancel={() => setDeleting(undefined)}
          onConfirm={() => remove.mutate(deleting.id, { onSettled: () => setDeleting(undefined) })}
        />
      )}
    </Section>
  );
}

/** A confirmation for a row without a name to type (a backup or snapshot, named by its time). */
function ConfirmDelete(props: {
  title: string;
  description: string;
  label: string;
  busy: boolean;
  onCancel: () => void;
  onConfirm: () => void;
}) {
  return (
    <Dialog open onOpenChange={(o) => !o && props.onCancel()} title={props.title} description={props.description}>
      <div className="form-actions">
        <Button onClick={props.onCancel}>Cancel</Button>
        <Button variant="danger" busy={props.busy} onClick={props.onConfirm}>
          {props.label}
        </Button>
      </div>
    </Dialog>
  );
}

function RestoreDialog({
  db,
  path,
  inPlace,
  onClose,
}: {
  db: Database;
  path: string;
  inPlace: boolean;
  onClose: () => void;
}) {
  const navigate = useNavigate();
  const [target, setTarget] = useState('new');
  const [name, setName] = useState('');
  const [confirmed, setConfirmed] = useState(false);
  const restore = useChange<void, { databaseId: string }>('POST', path, {
    invalidates: ['/platform/databases'],
    body: () => (target === 'in_place' ? { target, confirm: confirmed } : { target: 'new', ...(name ? { name } : {}) }),
    onSuccess: (r) => {
      onClose();
      void navigate(`/databases/${r.databaseId}`);
    },
  });
  return (
    <Dialog
      open
      onOpenChange={(o) => !o && onClose()}
      title="Restore a backup"
      description="Restore into a new database beside this one, or over this database’s data (a safety backup is taken first)."
    >
      <form
        onSubmit={(e) => {
          e.preventDefault();
          restore.mutate();
        }}
      >
        {inPlace && (
          <SelectField
            label="Restore into"
            value={target}
            onChange={(e) => setTarget(e.target.value)}
            options={[
              { value: 'new', label: 'A new database' },
              { value: 'in_place', label: `This database (${db.name}), replacing its data` },
            ]}
          />
        )}
        {target === 'new' ? (
          <TextField
            label="New database’s name (optional)"
            hint={`${db.name}-restored-<n> when empty.`}
            value={name}
            onChange={(e) => setName(e.target.value)}
            autoComplete="off"
          />
        ) : (
          <div className="field">
            <label>
              <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} /> I
              understand that the data {db.name} holds now is replaced
            </label>
          </div>
        )}
        <ErrorNote error={restore.error} />
        <div className="form-actions">
          <Button onClick={onClose}>Cancel</Button>
          <Button
            type="submit"
            variant={target === 'in_place' ? 'danger' : 'primary'}
            disabled={target === 'in_place' && !confirmed}
            busy={restore.isPending}
          >
            Restore
          </Button>
        </div>
      </form>
    </Dialog>
  );
}

function BackupSchedule({ base }: { base: string }) {
  const can = useCan();
  const path = `${base}/backup-schedule`;
  const schedule = useApi<Schedule>(path);
  const none = schedule.error instanceof ApiError && schedule.error.status === 404;
  const [cron, setCron] = useState('0 3 * * *');
  const [timezone, setTimezone] = useState('UTC');
  const [count, setCount] = useState('');
  const [days, setDays] = useState('');
  const save = useChange<void, Schedule>('PUT', path, {
    invalidates: [path],
    body: () => ({
      cron,
      timezone,
      retain: {
        ...(intOrUndefined(count) ? { count: intOrUndefined(count) } : {}),
        ...(intOrUndefined(days) ? { days: intOrUndefined(days) } : {}),
      },
    }),
  });
  const removeIt = useChange<void>('DELETE', path, { invalidates: [path] });
  const s = schedule.data;
  return (
    <Section title="Backup schedule">
      {schedule.isPending ? (
        <Loading what="Loading the schedule" />
      ) : s ? (
        <>
          <Facts
            items={[
              ['When', <code key="c">{`${s.cron} (${s.timezone})`}</code>],
              ['Next run', <Time key="n" iso={s.nextRunAt} />],
              [
                'Keeps',
                s.retain.count || s.retain.days
                  ? [s.retain.count && `the newest ${s.retain.count}`, s.retain.days && `${s.retain.days} days`]
                      .filter(Boolean)
                      .join(', ')
                  : 'every backup',
              ],
            ]}
          />
          {can('database.backup') && (
            <Button variant="danger" onClick={() => removeIt.mutate()} busy={removeIt.isPending}>
              Remove schedule
            </Button>
          )}
          <ErrorNote error={removeIt.error} />
        </>
      ) : (
        <>
          {none ? (
            <p className="empty">No schedule: backups are taken only when asked.</p>
          ) : (
            <ErrorNote error={schedule.error} />
          )}
          {can('database.backup') && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                save.mutate();
              }}
            >
              <TextField
                label="Cron expression"
                hint="Five fields: minute hour day-of-month month day-of-week, e.g. 0 3 * * * (03:00 daily)."
                value={cron}
                onChange={(e) => setCron(e.target.value)}
                autoComplete="off"
              />
              <TextField
                label="Time zone"
                hint="An IANA time zone such as UTC or Europe/Paris."
                value={timezone}
                onChange={(e) => setTimezone(e.target.value)}
                autoComplete="off"
              />
              <TextField
                label="Keep the newest (count, optional)"
                type="number"
                min={1}
                value={count}
                onChange={(e) => setCount(e.target.value)}
              />
              <TextField
                label="Keep for days (optional)"
                type="number"
                min={1}
                value={days}
                onChange={(e) => setDays(e.target.value)}
              />
              <ErrorNote error={save.error} />
              <div className="form-actions">
                <Button type="submit" variant="primary" busy={save.isPending}>
                  Set schedule
                </Button>
              </div>
            </form>
          )}
        </>
      )}
    </Section>
  );
}

function Snapshots({ db, base }: { db: Database; base: string }) {
  const can = useCan();
  const path = `${base}/snapshots`;
  const list = useApi<{ snapshots: Backup[] }>(`${path}?limit=50`);
  const take = useChange<void, Backup>('POST', path, { invalidates: [path], body: () => ({}) });
  const remove = useChange<string>('DELETE', (sid) => `${path}/${sid}`, { invalidates: [path] });
  const [restoring, setRestoring] = useState<Backup | undefined>();
  const [deleting, setDeleting] = useState<Backup | undefined>();
  return (
    <Section
      title="Snapshots"
      actions={
        can('database.backup') && (
          <Button onClick={() => take.mutate()} busy={take.isPending}>
            Take a snapshot
          </Button>
        )
      }
    >
      <ErrorNote error={take.error} />
      <ErrorNote error={list.error} />
      <DataTable
        caption="Snapshots"
        rows={list.data?.snapshots}
        rowKey={(b) => b.id}
        empty="No snapshots. A snapshot is kept until deleted and restores as a new database."
        columns={[
          { header: 'Taken', cell: (b) => <Time iso={b.createdAt} /> },
          { header: 'Status', cell: (b) => <StatusBadge status={b.status} /> },
          { header: 'Size', cell: (b) => formatBytes(b.sizeBytes) },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (b) => (
              <div className="page-actions">
                {can('database.restore') && b.status === 'complete' && (
                  <Button aria-label={`Restore the snapshot of ${b.createdAt}`} onClick={() => setRestoring(b)}>
                    Restore…
                  </Button>
                )}
                {can('database.delete') && (
                  <Button
                    variant="danger"
                    aria-label={`Delete the snapshot of ${b.createdAt}`}
                    onClick={() => setDeleting(b)}
                  >
                    Delete
                  </Button>
                )}
              </div>
            ),
          },
        ]}
      />
      <ErrorNote error={remove.error} />
      {restoring && (
        <RestoreDialog
          db={db}
          path={`${path}/${restoring.id}/restore`}
          inPlace={false}
          onClose={() => setRestoring(undefined)}
        />
      )}
      {deleting && (
        <ConfirmDelete
          title="Delete the snapshot?"
          description="The snapshot and its stored dump are removed for good."
          label="Delete snapshot"
          busy={remove.isPending}
          onCancel={() => setDeleting(undefined)}
          onConfirm={() => remove.mutate(deleting.id, { onSettled: () => setDeleting(undefined) })}
        />
      )}
    </Section>
  );
}

function Links({ base }: { base: string }) {
  const can = useCan();
  const path = `${base}/links`;
  const links = useApi<{ links: Array<{ deploymentId: string; envName: string }> }>(path);
  const canLink = can('database.create') && can('deployment.read');
  const deployments = useApi<{ deployments: Array<{ id: string; name: string }> }>(
    canLink ? '/platform/deployments?limit=100' : undefined,
  );
  const [deploymentId, setDeploymentId] = useState('');
  const [envName, setEnvName] = useState('');
  const link = useChange<void>('POST', path, {
    invalidates: [path],
    body: () => ({ deploymentId, ...(envName ? { envName } : {}) }),
    onSuccess: () => setDeploymentId(''),
  });
  const unlink = useChange<string>('DELETE', (d) => `${path}/${d}`, { invalidates: [path] });
  const names = new Map((deployments.data?.deployments ?? []).map((d) => [d.id, d.name]));
  return (
    <Section title="Linked deployments">
      <ErrorNote error={links.error} />
      <DataTable
        caption="Linked deployments"
        rows={links.data?.links}
        rowKey={(l) => l.deploymentId}
        empty="Not linked to any deployment. Linking gives a deployment of the project the URL as a variable, as a new release."
        columns={[
          {
            header: 'Deployment',
            cell: (l) => <DeploymentLink id={l.deploymentId} name={names.get(l.deploymentId)} />,
          },
          { header: 'Variable', cell: (l) => <code>{l.envName}</code> },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (l) =>
              can('database.delete') ? (
                <Button
                  aria-label={`Unlink ${names.get(l.deploymentId) ?? l.deploymentId}`}
                  busy={unlink.isPending && unlink.variables === l.deploymentId}
                  onClick={() => unlink.mutate(l.deploymentId)}
                >
                  Unlink
                </Button>
              ) : null,
          },
        ]}
      />
      <ErrorNote error={unlink.error} />
      {canLink && (deployments.data?.deployments.length ?? 0) > 0 && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (deploymentId) link.mutate();
          }}
        >
          <SelectField
            label="Deployment to link"
            value={deploymentId}
            onChange={(e) => setDeploymentId(e.target.value)}
            options={[
              { value: '', label: 'Choose a deployment' },
              ...(deployments.data?.deployments ?? []).map((d) => ({ value: d.id, label: d.name })),
            ]}
          />
          <TextField
            label="Variable name (optional)"
            hint="DATABASE_URL (REDIS_URL for Redis) when empty."
            value={envName}
            onChange={(e) => setEnvName(e.target.value)}
            autoComplete="off"
          />
          <ErrorNote error={link.error} />
          <div className="form-actions">
            <Button type="submit" busy={link.isPending} disabled={!deploymentId}>
              Link database
            </Button>
          </div>
        </form>
      )}
    </Section>
  );
}
