import { useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { NavLink, useSearchParams } from 'react-router';

import { qs } from '../../api/client';
import { useApi, useEventStream } from '../../api/hooks';
import { useCan } from '../../api/session';
import { DataTable, ErrorNote, Loading, Page, Section, SelectField, StatusBadge, Time } from '../../ui';
import { ProjectName, useProjects } from '../databases/shared';
import { type Deployment, STATUSES } from './types';

interface Live {
  status: string;
  at: string;
}

/** The organisation's deployments, filtered by project and status (kept in the URL), their statuses live. */
export function DeploymentList() {
  const can = useCan();
  const client = useQueryClient();
  const [params, setParams] = useSearchParams();
  const projectId = params.get('project') ?? '';
  const status = params.get('status') ?? '';
  const path = `/platform/deployments${qs({ limit: 100, projectId, status })}`;
  const list = useApi<{ deployments: Deployment[]; total: number }>(path);
  const projects = useProjects();
  const [live, setLive] = useState<Record<string, Live>>({});
  const opened = useRef(false);
  const reread = () => void client.invalidateQueries({ queryKey: [path] });

  // One stream for the whole list: the status of every deployment the session may see.
  useEventStream('/platform/deployment-events', ['ready', 'status', 'destroyed', 'resync'], (e) => {
    if (e.event === 'ready') {
      // A reconnect may have missed changes: the list is read again (not on the first open).
      if (opened.current) reread();
      opened.current = true;
      return;
    }
    if (e.event === 'resync' || e.event === 'destroyed') return reread();
    const d = e.data as { deploymentId: string; status: string; at: string };
    if (!list.data?.deployments.some((x) => x.id === d.deploymentId)) {
      // A deployment this list does not show yet: only a new one is worth reading the list again for.
      if (d.status === 'queued') reread();
      return;
    }
    setLive((m) => ({ ...m, [d.deploymentId]: { status: d.status, at: d.at } }));
  });

  const setFilter = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next, { replace: true });
  };
  const rows = (list.data?.deployments ?? [])
    .map((d) => (live[d.id] ? { ...d, status: live[d.id]!.status, updatedAt: live[d.id]!.at } : d))
    .filter((d) => !status || d.status === status);

  return (
    <Page
      title="Deployments"
      actions={can('deployment.create') ? <NavLink to="/deployments/new">New deployment</NavLink> : undefined}
    >
      <Section title="Filters">
        <div className="deployments-filters">
          <SelectField
            label="Project"
            value={projectId}
            onChange={(e) => setFilter('project', e.target.value)}
            options={[
              { value: '', label: 'All projects' },
              ...(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name })),
            ]}
          />
          <SelectField
            label="Status"
            value={status}
            onChange={(e) => setFilter('status', e.target.value)}
            options={[{ value: '', label: 'Any status' }, ...STATUSES.map((s) => ({ value: s, label: s }))]}
          />
        </div>
      </Section>
      <Section title="Your deployments">
        {list.isPending ? (
          <Loading what="Loading deployments" />
        ) : (
          <>
            <ErrorNote error={list.error} />
            <DataTable
              caption="Deployments"
              rows={rows}
              rowKey={(d) => d.id}
              empty={
                projectId || status
                  ? 'No deployment matches these filters: choose another project or status.'
                  : 'No deployments yet. Create one from an image, a zip or a folder, or a Git repository.'
              }
              columns={[
                { header: 'Name', cell: (d) => <NavLink to={`/deployments/${d.id}`}>{d.name}</NavLink> },
                { header: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
                {
                  header: 'URL',
                  cell: (d) => (d.url ? <a href={d.url}>{d.url}</a> : <span className="muted">none yet</span>),
                },
                { header: 'Project', cell: (d) => <ProjectName id={d.projectId} /> },
                { header: 'Updated', cell: (d) => <Time iso={d.updatedAt} /> },
              ]}
            />
          </>
        )}
      </Section>
    </Page>
  );
}
