import { useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';

import { qs } from '../../api/client';
import { useApi, useChange } from '../../api/hooks';
import { useCan } from '../../api/session';
import {
  Button,
  DataTable,
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

/** The shapes of api/features/git/schemas.ts, as the console reads them. */
const PROVIDERS = ['github', 'gitlab', 'gitea', 'generic'] as const;
interface Connection {
  id: string;
  provider: (typeof PROVIDERS)[number];
  baseUrl: string;
  tokenSecretId: string;
  vaultEnvironment: string;
  createdAt: string;
}
interface Binding {
  id: string;
  connectionId: string | null;
  provider: string | null;
  repoUrl: string;
  branch: string;
  deploymentId: string | null;
  projectId: string | null;
  target: 'deployment' | 'project';
  webhookUrl: string;
  createdAt: string;
}
interface Delivery {
  id: string;
  deliveryId: string | null;
  event: string | null;
  ref: string | null;
  commit: string | null;
  receivedAt: string;
  outcome: string;
  reason: string | null;
  releases: Array<{ deploymentId: string; commandId: string }>;
}

const CONNECTIONS = '/platform/git/connections';
const BINDINGS = '/platform/git/bindings';

export default function GitPage() {
  return (
    <Routes>
      <Route index element={<Overview />} />
      <Route path="bindings/:id" element={<BindingView />} />
    </Routes>
  );
}

function Overview() {
  const can = useCan();
  const connections = useApi<{ connections: Connection[] }>(`${CONNECTIONS}${qs({ limit: 100 })}`);
  const bindings = useApi<{ bindings: Binding[] }>(`${BINDINGS}${qs({ limit: 100 })}`);
  const manage = can('git.manage');
  const removeConnection = useChange<string>('DELETE', (id) => `${CONNECTIONS}/${id}`, {
    invalidates: [CONNECTIONS],
  });
  return (
    <Page title="Git">
      <Section title="Connections">
        <p className="muted">
          A Git host and the organisation secret holding its access token; bindings through it read private repositories
          and expect its webhook scheme.
        </p>
        {connections.isPending && <Loading what="Loading connections" />}
        <ErrorNote error={connections.error ?? removeConnection.error} />
        <DataTable
          caption="Git connections"
          rows={connections.data?.connections}
          rowKey={(c) => c.id}
          empty="No connection: public repositories need none; add one for a private repository."
          columns={[
            { header: 'Provider', cell: (c) => c.provider },
            { header: 'Host', cell: (c) => c.baseUrl },
            { header: 'Token secret', cell: (c) => <code>{c.tokenSecretId}</code> },
            { header: 'Added', cell: (c) => <Time iso={c.createdAt} /> },
            ...(manage
              ? [
                  {
                    header: 'Actions',
                    hiddenHeader: true,
                    cell: (c: Connection) => (
                      <Button
                        variant="danger"
                        aria-label={`Delete the ${c.provider} connection to ${c.baseUrl}`}
                        busy={removeConnection.isPending && removeConnection.variables === c.id}
                        onClick={() => {
                          if (window.confirm(`Delete the connection to ${c.baseUrl}?`)) removeConnection.mutate(c.id);
                        }}
                      >
                        Delete
                      </Button>
                    ),
                  },
                ]
              : []),
          ]}
        />
        {manage && <AddConnection />}
      </Section>
      <Section title="Bindings">
        <p className="muted">A repository's branch bound to a deployment or a project: each push ships a release.</p>
        {bindings.isPending && <Loading what="Loading bindings" />}
        <ErrorNote error={bindings.error} />
        <DataTable
          caption="Git bindings"
          rows={bindings.data?.bindings}
          rowKey={(b) => b.id}
          empty="No binding yet: bind a repository's branch below to ship each push."
          columns={[
            { header: 'Repository', cell: (b) => <Link to={`bindings/${b.id}`}>{b.repoUrl}</Link> },
            { header: 'Branch', cell: (b) => b.branch },
            {
              header: 'Target',
              cell: (b) => (
                <>
                  {b.target} <code>{b.deploymentId ?? b.projectId}</code>
                </>
              ),
            },
            { header: 'Added', cell: (b) => <Time iso={b.createdAt} /> },
          ]}
        />
        {manage && <AddBinding connections={connections.data?.connections ?? []} />}
      </Section>
    </Page>
  );
}

function AddConnection() {
  const [provider, setProvider] = useState<string>('github');
  const [baseUrl, setBaseUrl] = useState('');
  const [tokenSecretId, setTokenSecretId] = useState('');
  const add = useChange<void, Connection>('POST', CONNECTIONS, {
    invalidates: [CONNECTIONS],
    body: () => ({ provider, tokenSecretId, ...(baseUrl.trim() ? { baseUrl: baseUrl.trim() } : {}) }),
    onSuccess: () => {
      setBaseUrl('');
      setTokenSecretId('');
    },
  });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        add.mutate();
      }}
    >
      <h3>Add a connection</h3>
      <SelectField
        label="Provider"
        value={provider}
        onChange={(e) => setProvider(e.target.value)}
        options={PROVIDERS.map((p) => ({ value: p, label: p }))}
      />
      <TextField
        label="Host URL"
        value={baseUrl}
        onChange={(e) => setBaseUrl(e.target.value)}
        placeholder="https://git.example.com"
        hint="Empty: the provider's public host (generic needs one)."
      />
      <TextField
        label="Token secret ID"
        required
        value={tokenSecretId}
        onChange={(e) => setTokenSecretId(e.target.value)}
        hint="An organisation secret (Secrets) holding the host's access token, bound to the host; Slipway keeps the ID only."
      />
      <ErrorNote error={add.error} />
      <div className="form-actions">
        <Button type="submit" variant="primary" busy={add.isPending}>
          Add connection
        </Button>
      </div>
    </form>
  );
}

function AddBinding({ connections }: { connections: Connection[] }) {
  const [connectionId, setConnectionId] = useState('');
  const [repoUrl, setRepoUrl] = useState('');
  const [branch, setBranch] = useState('main');
  const [target, setTarget] = useState<'deployment' | 'project'>('deployment');
  const [targetId, setTargetId] = useState('');
  const add = useChange<void, Binding & { webhookSecret: string }>('POST', BINDINGS, {
    invalidates: [BINDINGS],
    body: () => ({
      repoUrl: repoUrl.trim(),
      branch: branch.trim(),
      ...(connectionId ? { connectionId } : {}),
      [target === 'deployment' ? 'deploymentId' : 'projectId']: targetId.trim(),
    }),
  });
  return (
    <>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          add.mutate();
        }}
      >
        <h3>Bind a repository</h3>
        <SelectField
          label="Connection"
          value={connectionId}
          onChange={(e) => setConnectionId(e.target.value)}
          options={[
            { value: '', label: 'none (a public repository)' },
            ...connections.map((c) => ({ value: c.id, label: `${c.provider} ${c.baseUrl}` })),
          ]}
        />
        <TextField label="Repository URL" required value={repoUrl} onChange={(e) => setRepoUrl(e.target.value)} />
        <TextField label="Branch" required value={branch} onChange={(e) => setBranch(e.target.value)} />
        <SelectField
          label="Ship pushes to"
          value={target}
          onChange={(e) => setTarget(e.target.value as 'deployment' | 'project')}
          options={[
            { value: 'deployment', label: 'a deployment' },
            { value: 'project', label: "a project's deployments built from this repository" },
          ]}
        />
        <TextField
          label={target === 'deployment' ? 'Deployment ID' : 'Project ID'}
          required
          value={targetId}
          onChange={(e) => setTargetId(e.target.value)}
        />
        <ErrorNote error={add.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={add.isPending}>
            Bind repository
          </Button>
        </div>
      </form>
      {add.data && (
        <div>
          <p>
            Add a webhook (push events) at the Git host: URL <code>{add.data.webhookUrl}</code> with this secret.
          </p>
          <SecretOnce label="Webhook secret" value={add.data.webhookSecret} />
        </div>
      )}
    </>
  );
}

function BindingView() {
  const { id = '' } = useParams();
  const can = useCan();
  const navigate = useNavigate();
  const path = `${BINDINGS}/${id}`;
  const binding = useApi<Binding>(path);
  const deliveries = useApi<{ deliveries: Delivery[]; total: number }>(`${path}/deliveries${qs({ limit: 50 })}`);
  const remove = useChange('DELETE', path, { invalidates: [BINDINGS], onSuccess: () => navigate('../..') });
  const b = binding.data;
  return (
    <Page title={b ? `Binding of ${b.repoUrl}` : 'Git binding'} actions={<Link to="../..">Git</Link>}>
      {binding.isPending && <Loading what="Loading the binding" />}
      <ErrorNote error={binding.error} />
      {b && (
        <Section title="Binding">
          <Facts
            items={[
              ['Repository', b.repoUrl],
              ['Branch', b.branch],
              ['Target', `${b.target} ${b.deploymentId ?? b.projectId ?? ''}`],
              ['Webhook URL', <code key="w">{b.webhookUrl}</code>],
              ['Webhook scheme', b.provider ?? 'any supported'],
              ['Added', <Time key="a" iso={b.createdAt} />],
            ]}
          />
          {can('git.manage') && (
            <TypeToConfirm
              label="Delete binding"
              name={b.branch}
              what="Its webhook URL answers 404 from now on and its deliveries are deleted."
              onConfirm={() => remove.mutate()}
              busy={remove.isPending}
              error={remove.error}
            />
          )}
        </Section>
      )}
      <Section title={deliveries.data ? `Deliveries (${deliveries.data.total})` : 'Deliveries'}>
        {deliveries.isPending && <Loading what="Loading deliveries" />}
        <ErrorNote error={deliveries.error} />
        <DataTable
          caption="Webhook deliveries, newest first"
          rows={deliveries.data?.deliveries}
          rowKey={(d) => d.id}
          empty="No delivery yet: the Git host sends one on each push once the webhook is set up."
          columns={[
            { header: 'Received', cell: (d) => <Time iso={d.receivedAt} /> },
            { header: 'Outcome', cell: (d) => <StatusBadge status={d.outcome} /> },
            { header: 'Event', cell: (d) => d.event ?? '—' },
            { header: 'Ref', cell: (d) => d.ref ?? '—' },
            { header: 'Commit', cell: (d) => (d.commit ? <code>{d.commit.slice(0, 12)}</code> : '—') },
            { header: 'Reason', cell: (d) => d.reason ?? '—' },
            { header: 'Releases', cell: (d) => d.releases.length },
          ]}
        />
      </Section>
    </Page>
  );
}
