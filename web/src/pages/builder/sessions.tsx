import { useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';

import { qs } from '../../api/client';
import { useApi, useChange } from '../../api/hooks';
import { useMe } from '../../api/session';
import { Button, DataTable, Empty, ErrorNote, Loading, Page, Section, SelectField, TextField, Time } from '../../ui';
import type { Project, Provider, Session, SessionSummary } from './types';

/** The builder's front page: a project's sessions, a new one, and a remix of a share by its slug. */
export function SessionsList() {
  const [params, setParams] = useSearchParams();
  const projects = useApi<{ projects: Project[] }>(`/platform/projects${qs({ limit: 100 })}`);
  const list = projects.data?.projects ?? [];
  const projectId = params.get('project') ?? list[0]?.id;
  // An org viewer reads sessions and makes none: the api refuses it, so the page offers nothing it would refuse.
  const canChange = useMe().user.role !== 'viewer';

  return (
    <Page title="AI Builder">
      <ErrorNote error={projects.error} />
      {projects.isLoading && <Loading what="Loading projects" />}
      {projects.data && list.length === 0 && (
        <Empty>
          No project yet: the builder keeps its sessions in a project. <Link to="/projects">Create a project</Link>{' '}
          first.
        </Empty>
      )}
      {projectId && (
        <>
          <SelectField
            label="Project"
            value={projectId}
            onChange={(e) => setParams({ project: e.target.value })}
            options={list.map((p) => ({ value: p.id, label: p.name }))}
          />
          <ProjectSessions projectId={projectId} />
          {canChange && <NewSession projectId={projectId} />}
          {canChange && <RemixForm projectId={projectId} />}
        </>
      )}
    </Page>
  );
}

function ProjectSessions({ projectId }: { projectId: string }) {
  const sessions = useApi<SessionSummary[]>(`/platform/builder/projects/${encodeURIComponent(projectId)}/sessions`);
  return (
    <Section title="Sessions">
      <ErrorNote error={sessions.error} />
      {sessions.isLoading && <Loading what="Loading sessions" />}
      <DataTable
        caption="Sessions of the project"
        rows={sessions.data}
        rowKey={(s) => s.id}
        empty="No session in this project yet: start one below and describe the app you want."
        columns={[
          { header: 'Title', cell: (s) => <Link to={`/builder/${s.id}`}>{s.title}</Link> },
          { header: 'Model', cell: (s) => s.model ?? <span className="muted">the organisation's default</span> },
          { header: 'Origin', cell: (s) => (s.remixedFrom ? 'remix' : s.isDefault ? "project's default" : 'new') },
          { header: 'Created', cell: (s) => <Time iso={s.createdAt} /> },
        ]}
      />
    </Section>
  );
}

function NewSession({ projectId }: { projectId: string }) {
  const navigate = useNavigate();
  const providers = useApi<Provider[]>('/platform/builder/providers');
  const [title, setTitle] = useState('');
  const [providerId, setProviderId] = useState('');
  const create = useChange<void, Session>('POST', '/platform/builder/sessions', {
    invalidates: [`/platform/builder/projects/${encodeURIComponent(projectId)}/sessions`],
    body: () => ({
      projectId,
      ...(title.trim() ? { title: title.trim() } : {}),
      ...(providerId ? { providerId } : {}),
    }),
    onSuccess: (s) => navigate(`/builder/${s.id}`),
  });
  return (
    <Section title="New session">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <TextField
          label="Title"
          value={title}
          maxLength={120}
          placeholder="Untitled app"
          onChange={(e) => setTitle(e.target.value)}
        />
        <SelectField
          label="AI provider"
          hint={
            providers.data?.length === 0
              ? 'No provider is enabled: an org admin adds one under AI providers.'
              : 'The model answers your messages; you can change it in the session.'
          }
          value={providerId}
          onChange={(e) => setProviderId(e.target.value)}
          options={[
            { value: '', label: 'The first enabled provider' },
            ...(providers.data ?? []).map((p) => ({ value: p.id, label: `${p.name} (${p.defaultModel})` })),
          ]}
        />
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create session
          </Button>
        </div>
      </form>
    </Section>
  );
}

/** A share link's slug (or the whole link) copied into a new session of this project. */
function RemixForm({ projectId }: { projectId: string }) {
  const navigate = useNavigate();
  const [link, setLink] = useState('');
  const slug = link.trim().split('/').pop() ?? '';
  const remix = useChange<void, Session>('POST', () => `/platform/builder/shares/${encodeURIComponent(slug)}/remix`, {
    invalidates: [`/platform/builder/projects/${encodeURIComponent(projectId)}/sessions`],
    body: () => ({ projectId }),
    onSuccess: (s) => navigate(`/builder/${s.id}`),
  });
  return (
    <Section title="Remix a share">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (slug) remix.mutate();
        }}
      >
        <TextField
          label="Share link or slug"
          hint="A share made with remix access; its files become a new session of this project."
          value={link}
          onChange={(e) => setLink(e.target.value)}
          autoComplete="off"
        />
        <ErrorNote error={remix.error} />
        <div className="form-actions">
          <Button type="submit" busy={remix.isPending} disabled={!slug}>
            Remix
          </Button>
        </div>
      </form>
    </Section>
  );
}
