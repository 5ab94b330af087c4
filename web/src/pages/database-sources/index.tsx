import { type FormEvent, type ReactNode, useState } from 'react';
import { NavLink, Route, Routes, useNavigate, useParams } from 'react-router';

import { useApi, useChange } from '../../api/hooks';
import { useCan } from '../../api/session';
import {
  Button,
  DataTable,
  ErrorNote,
  Facts,
  Loading,
  Page,
  Section,
  SelectField,
  StatusBadge,
  Tabs,
  TextArea,
  TextField,
  Time,
  TypeToConfirm,
} from '../../ui';
import { intOrUndefined, ProjectName, ProjectSelect } from '../databases/shared';

interface Privileges {
  write: boolean;
  ddl: boolean;
  superuser: boolean;
  files: boolean;
}

interface Source {
  id: string;
  name: string;
  projectId: string | null;
  engine: 'postgres' | 'mysql';
  databaseId: string | null;
  host: string | null;
  port: number | null;
  database: string | null;
  user: string | null;
  tls: string;
  passwordSet: boolean;
  lastTest: { at: string; ok: boolean; serverVersion?: string; privileges?: Privileges; error?: string } | null;
  createdAt: string;
}

interface TestResult {
  ok: boolean;
  serverVersion?: string;
  privileges?: Privileges;
  readOnlyUser?: boolean;
  warnings: string[];
  error?: string;
}

interface QueryResult {
  columns: Array<{ name: string; type: string }>;
  rows: unknown[][];
  rowCount: number;
  truncated: boolean;
  truncatedBy: 'rows' | 'bytes' | null;
  timing: { totalMs: number };
  readOnly?: { note: string };
}

interface Question {
  id: string;
  question: string;
  status: string;
  sql: string | null;
  explanation: string | null;
  rule: string | null;
  error: string | null;
  result: QueryResult | null;
  model: string;
  askedAt: string;
}

interface SchemaDescription {
  engine: string;
  truncated: boolean;
  schemas: Array<{
    name: string;
    tables: Array<{
      name: string;
      kind: string;
      rowEstimate: number | null;
      columns: Array<{ name: string; type: string; nullable: boolean; default: string | null }>;
      primaryKey: string[];
    }>;
  }>;
}

/** Databases outside Slipway (or managed ones by reference) to read from: schema, read-only queries, questions. */
export default function DatabaseSourcesPage() {
  return (
    <Routes>
      <Route index element={<SourceList />} />
      <Route path=":id" element={<SourceDetail />} />
    </Routes>
  );
}

const where = (s: Source) =>
  s.databaseId ? 'managed database' : `${s.host ?? ''}:${s.port ?? ''}/${s.database ?? ''}`;

function SourceList() {
  const can = useCan();
  const list = useApi<{ sources: Source[] }>('/platform/database-sources?limit=100');
  return (
    <Page title="Database sources">
      <Section title="Your sources">
        {list.isPending ? (
          <Loading what="Loading sources" />
        ) : (
          <>
            <ErrorNote error={list.error} />
            <DataTable
              caption="Database sources"
              rows={list.data?.sources}
              rowKey={(s) => s.id}
              empty="No database sources yet. Add one below with a read-only user, then test it."
              columns={[
                { header: 'Name', cell: (s) => <NavLink to={`/database-sources/${s.id}`}>{s.name}</NavLink> },
                { header: 'Engine', cell: (s) => s.engine },
                { header: 'Where', cell: (s) => <code>{where(s)}</code> },
                { header: 'Project', cell: (s) => <ProjectName id={s.projectId} /> },
                {
                  header: 'Last test',
                  cell: (s) =>
                    s.lastTest ? <StatusBadge status={s.lastTest.ok ? 'succeeded' : 'failed'} /> : 'not tested',
                },
              ]}
            />
          </>
        )}
      </Section>
      {can('database_source.manage') && <AddSource />}
    </Page>
  );
}

function AddSource() {
  const navigate = useNavigate();
  const [f, setF] = useState({
    name: '',
    engine: 'postgres',
    host: '',
    port: '5432',
    database: '',
    user: '',
    password: '',
    tls: 'verify',
    projectId: '',
  });
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const [mode, setMode] = useState<'external' | 'managed'>('external');
  const [databaseId, setDatabaseId] = useState('');
  // The organisation's managed databases are read only when the person chooses to add one by reference.
  const managed = useApi<{ databases: Array<{ id: string; name: string; engine: string }> }>(
    mode === 'managed' ? '/platform/databases?kind=managed&limit=100' : undefined,
  );
  const sql = (managed.data?.databases ?? []).filter((d) => d.engine !== 'redis');
  const add = useChange<void, Source>('POST', '/platform/database-sources', {
    invalidates: ['/platform/database-sources'],
    body: () =>
      mode === 'managed'
        ? {
            databaseId,
            ...(f.name ? { name: f.name } : {}),
            ...(f.projectId ? { projectId: f.projectId } : {}),
          }
        : {
            engine: f.engine,
            host: f.host,
            port: intOrUndefined(f.port),
            database: f.database,
            user: f.user,
            password: f.password,
            tls: f.tls,
            ...(f.name ? { name: f.name } : {}),
            ...(f.projectId ? { projectId: f.projectId } : {}),
          },
    onSuccess: (s) => {
      // The password leaves the page's memory with the form: it is never shown again.
      setF({ ...f, password: '' });
      void navigate(`/database-sources/${s.id}`);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate();
  };
  return (
    <Section title="Add a source">
      <form onSubmit={submit}>
        <SelectField
          label="Connect to"
          value={mode}
          onChange={(e) => setMode(e.target.value as 'external' | 'managed')}
          options={[
            { value: 'external', label: 'A server by its address' },
            { value: 'managed', label: 'A managed database of this organisation' },
          ]}
        />
        <TextField label="Name (optional)" value={f.name} onChange={set('name')} autoComplete="off" />
        {mode === 'managed' ? (
          <SelectField
            label="Managed database"
            hint="PostgreSQL or MariaDB; its own address and credentials are used."
            value={databaseId}
            onChange={(e) => setDatabaseId(e.target.value)}
            options={[
              { value: '', label: sql.length ? 'Choose a database' : 'No managed PostgreSQL or MariaDB database' },
              ...sql.map((d) => ({ value: d.id, label: `${d.name} (${d.engine})` })),
            ]}
          />
        ) : (
          <>
            <SelectField
              label="Engine"
              value={f.engine}
              onChange={(e) =>
                setF({ ...f, engine: e.target.value, port: e.target.value === 'mysql' ? '3306' : '5432' })
              }
              options={[
                { value: 'postgres', label: 'PostgreSQL' },
                { value: 'mysql', label: 'MySQL or MariaDB' },
              ]}
            />
            <TextField label="Host" value={f.host} onChange={set('host')} required autoComplete="off" />
            <TextField label="Port" type="number" value={f.port} onChange={set('port')} required />
            <TextField label="Database" value={f.database} onChange={set('database')} required autoComplete="off" />
            <TextField
              label="User"
              hint="Give the source a user that may only read."
              value={f.user}
              onChange={set('user')}
              required
              autoComplete="off"
            />
            <TextField
              label="Password"
              type="password"
              hint="Stored sealed; it is never shown again after saving."
              value={f.password}
              onChange={set('password')}
              autoComplete="new-password"
            />
            <SelectField
              label="TLS"
              value={f.tls}
              onChange={set('tls')}
              options={[
                { value: 'verify', label: 'Verify the certificate' },
                { value: 'require', label: 'Require TLS, do not check the certificate' },
                { value: 'disable', label: 'No TLS' },
              ]}
            />
          </>
        )}
        <ProjectSelect value={f.projectId} onChange={(projectId) => setF({ ...f, projectId })} />
        <ErrorNote error={add.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={add.isPending}>
            Add source
          </Button>
        </div>
      </form>
    </Section>
  );
}

function SourceDetail() {
  const { id = '' } = useParams();
  const can = useCan();
  const navigate = useNavigate();
  const base = `/platform/database-sources/${id}`;
  const s = useApi<Source>(base);
  const remove = useChange<void>('DELETE', base, {
    invalidates: ['/platform/database-sources'],
    onSuccess: () => navigate('/database-sources'),
  });
  if (s.isPending) return <Loading what="Loading the source" />;
  if (!s.data)
    return (
      <Page title="Database source">
        <ErrorNote error={s.error} />
        <NavLink to="/database-sources">Back to database sources</NavLink>
      </Page>
    );
  const src = s.data;
  return (
    <Page
      title={`Source ${src.name}`}
      actions={
        can('database_source.manage') && (
          <TypeToConfirm
            label="Remove source"
            name={src.name}
            what="The source and the questions asked of it are removed; the database itself is not touched."
            onConfirm={() => remove.mutate()}
            busy={remove.isPending}
            error={remove.error}
          />
        )
      }
    >
      <p>
        <NavLink to="/database-sources">All database sources</NavLink>
      </p>
      <Section title="Connection">
        <Facts
          items={[
            ['Engine', src.engine],
            ...(src.databaseId
              ? ([
                  [
                    'Managed database',
                    <NavLink key="d" to={`/databases/${src.databaseId}`}>
                      {src.databaseId}
                    </NavLink>,
                  ],
                ] as Array<[string, ReactNode]>)
              : ([
                  ['Host', <code key="h">{`${src.host ?? ''}:${src.port ?? ''}`}</code>],
                  ['Database', src.database ?? '—'],
                  ['User', src.user ?? '—'],
                  ['Password', src.passwordSet ? 'set (never shown)' : 'none'],
                  ['TLS', src.tls],
                ] as Array<[string, ReactNode]>)),
            ['Project', <ProjectName key="p" id={src.projectId} />],
            [
              'Last test',
              src.lastTest ? (
                <span key="t">
                  <StatusBadge status={src.lastTest.ok ? 'succeeded' : 'failed'} /> <Time iso={src.lastTest.at} />
                </span>
              ) : (
                'not tested yet'
              ),
            ],
          ]}
        />
        {can('database_source.manage') && <TestSource base={base} />}
      </Section>
      <Tabs
        tabs={[
          ...(can('database_source.query')
            ? [
                { id: 'query', label: 'Query', content: <RunQuery base={base} /> },
                { id: 'ask', label: 'Ask a question', content: <Ask base={base} /> },
              ]
            : []),
          { id: 'schema', label: 'Schema', content: <SchemaView base={base} /> },
        ]}
      />
    </Page>
  );
}

function TestSource({ base }: { base: string }) {
  const test = useChange<void, TestResult>('POST', `${base}/test`, { invalidates: [base], body: () => ({}) });
  const r = test.data;
  return (
    <div>
      <Button onClick={() => test.mutate()} busy={test.isPending}>
        Test connection
      </Button>
      <ErrorNote error={test.error} />
      {r && !r.ok && <ErrorNote error={`Test failed: ${r.error ?? 'the server could not be reached'}`} />}
      {r?.ok && (
        <div role="status">
          <p>
            Connected{r.serverVersion ? ` to ${r.serverVersion}` : ''}.{' '}
            {r.readOnlyUser ? 'The user may only read.' : 'The user may do more than read.'}
          </p>
          {r.warnings.length > 0 && (
            <ul>
              {r.warnings.map((w) => (
                <li key={w}>{w}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

function ResultTable({ result }: { result: QueryResult }) {
  return (
    <>
      <p className="muted">
        {result.rowCount} rows in {Math.round(result.timing.totalMs)} ms
        {result.truncated ? ` (cut at the ${result.truncatedBy === 'bytes' ? 'size' : 'row'} limit)` : ''}.
      </p>
      <div className="table-wrap">
        <table>
          <caption className="sr-only">Query results</caption>
          <thead>
            <tr>
              {result.columns.map((c, i) => (
                <th key={i} scope="col">
                  {c.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {result.rows.map((row, i) => (
              <tr key={i}>
                {row.map((v, j) => (
                  <td key={j}>{v === null ? <span className="muted">null</span> : String(v)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

function RunQuery({ base }: { base: string }) {
  const [sql, setSql] = useState('SELECT 1');
  const [maxRows, setMaxRows] = useState('100');
  const run = useChange<void, QueryResult>('POST', `${base}/query`, {
    body: () => ({ sql, ...(intOrUndefined(maxRows) ? { maxRows: intOrUndefined(maxRows) } : {}) }),
  });
  return (
    <div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          run.mutate();
        }}
      >
        <TextArea
          label="SQL"
          hint="One read-only statement: SELECT, WITH … SELECT or EXPLAIN. Anything else is refused before it reaches the database."
          value={sql}
          onChange={(e) => setSql(e.target.value)}
          rows={5}
          className="mono"
          spellCheck={false}
        />
        <TextField
          label="At most this many rows"
          type="number"
          min={1}
          value={maxRows}
          onChange={(e) => setMaxRows(e.target.value)}
        />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={run.isPending}>
            Run query
          </Button>
        </div>
      </form>
      <ErrorNote error={run.error} />
      {run.data && <ResultTable result={run.data} />}
    </div>
  );
}

function Ask({ base }: { base: string }) {
  const [question, setQuestion] = useState('');
  const ask = useChange<void, Question>('POST', `${base}/ask`, {
    invalidates: [`${base}/questions`],
    body: () => ({ question }),
  });
  // A question still running is read again only when the person asks (no polling).
  const [refresh, setRefresh] = useState<string | undefined>();
  const later = useApi<Question>(refresh ? `${base}/questions/${refresh}` : undefined);
  const q = later.data ?? ask.data;
  return (
    <div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setRefresh(undefined);
          ask.mutate();
        }}
      >
        <TextArea
          label="Question"
          hint="In plain words; the organisation’s AI provider writes the SQL, which runs through the same read-only checks."
          value={question}
          onChange={(e) => setQuestion(e.target.value)}
          rows={3}
          required
        />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={ask.isPending}>
            Ask
          </Button>
        </div>
      </form>
      <ErrorNote error={ask.error} />
      {q && (
        <div>
          <p>
            <StatusBadge status={q.status} /> {q.explanation}
          </p>
          {q.sql && <pre className="mono">{q.sql}</pre>}
          {q.rule && <ErrorNote error={`Refused by the safety check: ${q.rule}`} />}
          {q.error && <ErrorNote error={q.error} />}
          {q.status === 'running' && (
            <Button
              onClick={() => {
                if (refresh) void later.refetch();
                else setRefresh(q.id);
              }}
              busy={later.isFetching}
            >
              Check the answer
            </Button>
          )}
          {q.result && <ResultTable result={q.result} />}
        </div>
      )}
    </div>
  );
}

function SchemaView({ base }: { base: string }) {
  // The schema is read from the database itself: only when asked for.
  const [open, setOpen] = useState(false);
  const schema = useApi<SchemaDescription>(open ? `${base}/schema` : undefined);
  if (!open) return <Button onClick={() => setOpen(true)}>Load the schema</Button>;
  if (schema.isPending) return <Loading what="Reading the schema" />;
  if (!schema.data) return <ErrorNote error={schema.error} />;
  const tables = schema.data.schemas.flatMap((s) => s.tables.map((t) => ({ ...t, schema: s.name })));
  return (
    <div>
      {schema.data.truncated && <p className="muted">More tables exist than are shown here.</p>}
      {tables.length === 0 && <p className="empty">No tables or views this user can see.</p>}
      {tables.map((t) => (
        <details key={`${t.schema}.${t.name}`}>
          <summary>
            {t.schema}.{t.name}{' '}
            <span className="muted">
              ({t.kind.replace('_', ' ')}, ~{t.rowEstimate ?? '?'} rows)
            </span>
          </summary>
          <DataTable
            caption={`Columns of ${t.schema}.${t.name}`}
            rows={t.columns}
            rowKey={(c) => c.name}
            columns={[
              { header: 'Column', cell: (c) => <code>{c.name}</code> },
              { header: 'Type', cell: (c) => c.type },
              { header: 'Null', cell: (c) => (c.nullable ? 'yes' : 'no') },
              { header: 'Key', cell: (c) => (t.primaryKey.includes(c.name) ? 'primary' : '') },
            ]}
          />
        </details>
      ))}
    </div>
  );
}
