import { useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useParams } from 'react-router';

import { del, get, post, put } from '../../api/client';
import { useApi, useChange } from '../../api/hooks';
import { useCan, useMe } from '../../api/session';
import { Button, DataTable, ErrorNote, Loading, Page, Section, SelectField, StatusBadge, Time } from '../../ui';
import { Chat } from './chat';
import { Files } from './files';
import type { Provider, Sandbox, Session, Share } from './types';
import { sessionPath } from './types';

/** One session: the chat with the model, its files and editor, the live preview, checkpoints, share and publish. */
export default function SessionPage() {
  const { id = '' } = useParams();
  const session = useApi<Session>(sessionPath(id));
  // An org viewer reads sessions and changes none (the api refuses it); a project viewer is refused by the api alone,
  // since the console does not know the caller's role in each project.
  const canChange = useMe().user.role !== 'viewer';
  const s = session.data;
  if (!s)
    return (
      <Page title="Builder session">
        <ErrorNote error={session.error} />
        {session.isLoading && <Loading what="Loading the session" />}
        <p>
          <Link to="/builder">All sessions</Link>
        </p>
      </Page>
    );
  return (
    <Page
      title={s.title}
      actions={<Link to={`/builder?project=${encodeURIComponent(s.projectId)}`}>All sessions</Link>}
    >
      {canChange ? (
        <ModelChoice session={s} />
      ) : (
        <p className="muted">Your role reads this session; a project developer or admin changes it.</p>
      )}
      <div className="builder-grid">
        <Chat session={s} canChange={canChange} />
        <Preview session={s} canChange={canChange} />
      </div>
      <Files session={s} canChange={canChange} />
      <Checkpoints session={s} canChange={canChange} />
      {canChange && <ShareSection session={s} />}
      <Publish session={s} />
    </Page>
  );
}

/** The session's provider and model: a change applies to the next message. */
function ModelChoice({ session: s }: { session: Session }) {
  const providers = useApi<Provider[]>('/platform/builder/providers');
  const list = providers.data ?? [];
  const [providerId, setProviderId] = useState(s.providerId ?? list[0]?.id ?? '');
  const provider = list.find((p) => p.id === (providerId || list[0]?.id));
  const [model, setModel] = useState(s.model ?? '');
  const models = provider ? [...new Set([provider.defaultModel, ...provider.models])] : [];
  const chosenModel = model && models.includes(model) ? model : (provider?.defaultModel ?? '');
  const save = useChange<void, Session>('PUT', `${sessionPath(s.id)}/provider`, {
    invalidates: [sessionPath(s.id)],
    body: () => ({ providerId: provider?.id, model: chosenModel }),
  });
  if (providers.data && list.length === 0)
    return <p className="muted">No AI provider is enabled: an org admin adds one under AI providers.</p>;
  return (
    <form
      className="builder-model"
      aria-label="Model"
      onSubmit={(e) => {
        e.preventDefault();
        if (provider) save.mutate();
      }}
    >
      <SelectField
        label="AI provider"
        value={provider?.id ?? ''}
        onChange={(e) => {
          setProviderId(e.target.value);
          setModel('');
        }}
        options={list.map((p) => ({ value: p.id, label: p.name }))}
      />
      <SelectField
        label="Model"
        value={chosenModel}
        onChange={(e) => setModel(e.target.value)}
        options={models.map((m) => ({ value: m, label: m }))}
      />
      <div className="form-actions">
        <Button type="submit" busy={save.isPending} disabled={!provider}>
          Use this model
        </Button>
        {s.model && <span className="muted">Now: {s.model}</span>}
      </div>
      <ErrorNote error={save.error ?? providers.error} />
    </form>
  );
}

interface SyncProgress {
  state: 'running' | 'ended';
  url: string;
  sync: { status: string; error: string | null } | null;
  sandbox: Sandbox;
}

/** The live preview: the sandbox's stable URL in a frame; configured, then synced to the head on demand. */
function Preview({ session: s, canChange }: { session: Session; canChange: boolean }) {
  const client = useQueryClient();
  const [runtime, setRuntime] = useState<Sandbox['runtime']>('static');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [reloads, setReloads] = useState(0);
  const sandbox = s.sandbox;

  /** Syncs, then follows the sync's URL (each read waits a few seconds on the server) until it has ended. */
  async function sync(configure: boolean) {
    setBusy(true);
    setError(null);
    try {
      if (configure) await put(`${sessionPath(s.id)}/sandbox`, { runtime });
      let p = await post<SyncProgress>(`${sessionPath(s.id)}/sandbox/sync`, {});
      for (let reads = 0; p.state === 'running' && reads < 60; reads++) p = await get<SyncProgress>(p.url);
      if (p.sync?.error) setError(p.sync.error);
      setReloads((n) => n + 1);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
      await client.invalidateQueries({ queryKey: [sessionPath(s.id)] });
    }
  }

  return (
    <Section title="Preview">
      {sandbox ? (
        <>
          <p>
            <StatusBadge status={sandbox.status} />{' '}
            {sandbox.inSync ? 'Shows the latest files.' : 'Does not show the latest files yet: sync it.'}{' '}
            <a href={sandbox.previewUrl} target="_blank" rel="noreferrer">
              Open the preview in a new tab
            </a>
          </p>
          {sandbox.error && <p className="muted">Last sync: {sandbox.error}</p>}
          <iframe
            key={reloads}
            className="builder-preview"
            title={`Live preview of ${s.title}`}
            src={sandbox.previewUrl}
            sandbox="allow-scripts allow-forms allow-same-origin allow-popups"
          />
          {canChange && (
            <div className="form-actions">
              <Button onClick={() => void sync(false)} busy={busy}>
                Sync preview
              </Button>
            </div>
          )}
        </>
      ) : !canChange ? (
        <p className="muted">No preview yet.</p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void sync(true);
          }}
        >
          <p>No preview yet: start one to see the app run as you change it.</p>
          <SelectField
            label="Runtime"
            value={runtime}
            onChange={(e) => setRuntime(e.target.value as Sandbox['runtime'])}
            options={[
              { value: 'static', label: 'Static site (HTML, CSS, JavaScript)' },
              { value: 'node', label: 'Node.js (npm start)' },
              { value: 'python', label: 'Python (app.py)' },
            ]}
          />
          <div className="form-actions">
            <Button type="submit" variant="primary" busy={busy}>
              Start preview
            </Button>
          </div>
        </form>
      )}
      <ErrorNote error={error} />
    </Section>
  );
}

/** The latest checkpoints, newest first; reverting makes a new checkpoint with an earlier one's files. */
function Checkpoints({ session: s, canChange }: { session: Session; canChange: boolean }) {
  const revert = useChange<string, unknown>('POST', `${sessionPath(s.id)}/revert`, {
    invalidates: [sessionPath(s.id)],
    body: (checkpointId) => ({ checkpointId, expectedHead: s.head?.id ?? null }),
  });
  return (
    <Section title="Checkpoints">
      <DataTable
        caption="Checkpoints of the session, newest first"
        rows={s.checkpoints}
        rowKey={(c) => c.id}
        empty="No checkpoint yet: a save or a message that changes files makes one."
        columns={[
          { header: 'Checkpoint', cell: (c) => `#${c.seq}${c.id === s.head?.id ? ' (current)' : ''}` },
          { header: 'Made by', cell: (c) => c.reason },
          { header: 'Files', cell: (c) => c.fileCount },
          { header: 'Created', cell: (c) => <Time iso={c.createdAt} /> },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (c) =>
              c.id === s.head?.id || !canChange ? null : (
                <Button onClick={() => revert.mutate(c.id)} busy={revert.isPending && revert.variables === c.id}>
                  Revert to checkpoint #{c.seq}
                </Button>
              ),
          },
        ]}
      />
      <ErrorNote error={revert.error} />
    </Section>
  );
}

/** A share link pinned to the current files: view, or view and remix. */
function ShareSection({ session: s }: { session: Session }) {
  const [access, setAccess] = useState<Share['access']>('view');
  const [share, setShare] = useState<Share | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const link = share ? `${window.location.origin}/builder/shares/${share.slug}` : '';
  async function run(f: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await f();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <Section title="Share">
      {s.head ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => setShare(await post<Share>(`${sessionPath(s.id)}/share`, { access })));
          }}
        >
          <SelectField
            label="Access"
            hint="Members of your organisation who have the link can read the files; with remix they can copy them."
            value={access}
            onChange={(e) => setAccess(e.target.value as Share['access'])}
            options={[
              { value: 'view', label: 'View' },
              { value: 'remix', label: 'View and remix' },
            ]}
          />
          <div className="form-actions">
            <Button type="submit" busy={busy}>
              Create share link
            </Button>
          </div>
        </form>
      ) : (
        <p className="muted">Nothing to share yet: the session has no files.</p>
      )}
      {share && (
        <p>
          Share link (pinned to checkpoint {share.checkpointId.slice(0, 8)}):{' '}
          <a href={link} aria-label={`Share link ${link}`}>
            {link}
          </a>{' '}
          <Button
            variant="danger"
            busy={busy}
            onClick={() =>
              void run(async () => {
                await del(`/platform/builder/shares/${encodeURIComponent(share.slug)}`);
                setShare(null);
              })
            }
          >
            Revoke link
          </Button>
        </p>
      )}
      <ErrorNote error={error} />
    </Section>
  );
}

interface Published {
  deploymentId: string;
  url: string | null;
  created: boolean;
  deployment: { name?: string; status?: string };
}

/** Publishes the head as a deployment (the first time a new one, then a new release of it). */
function Publish({ session: s }: { session: Session }) {
  const can = useCan();
  const publish = useChange<void, Published>('POST', `${sessionPath(s.id)}/publish`, {
    invalidates: ['/platform/deployments'],
    body: () => ({}),
  });
  if (!can('deployment.create')) return null;
  const r = publish.data;
  return (
    <Section title="Publish">
      <p>
        Ships the current files as a deployment of this project; each publish after the first is a new release at the
        same address.
      </p>
      <div className="form-actions">
        <Button variant="primary" busy={publish.isPending} disabled={!s.head} onClick={() => publish.mutate()}>
          Publish
        </Button>
      </div>
      {r && (
        <p role="status">
          {r.created ? 'Deployment created' : 'New release on its way'}:{' '}
          <Link to={`/deployments/${r.deploymentId}`}>the deployment</Link>
          {r.url && (
            <>
              {' '}
              answering at{' '}
              <a href={r.url} target="_blank" rel="noreferrer">
                {r.url}
              </a>
            </>
          )}
          .
        </p>
      )}
      <ErrorNote error={publish.error} />
    </Section>
  );
}
