import { useState } from 'react';
import { useNavigate, useParams } from 'react-router';

import { qs } from '../../api/client';
import { useApi, useChange } from '../../api/hooks';
import { Button, DataTable, ErrorNote, Facts, Loading, Page, Section, SelectField, Time } from '../../ui';
import type { FileEntry, Project, Session, Share } from './types';

/** A share link opened: the files it is pinned to, and (when the share allows it) a remix into a project. */
export function SharedView() {
  const { slug = '' } = useParams();
  const navigate = useNavigate();
  const share = useApi<Share & { title: string; files: FileEntry[] }>(
    `/platform/builder/shares/${encodeURIComponent(slug)}`,
  );
  const projects = useApi<{ projects: Project[] }>(`/platform/projects${qs({ limit: 100 })}`, {
    enabled: share.data?.access === 'remix',
  });
  const [projectId, setProjectId] = useState('');
  const target = projectId || projects.data?.projects[0]?.id || '';
  const remix = useChange<void, Session>('POST', `/platform/builder/shares/${encodeURIComponent(slug)}/remix`, {
    body: () => ({ projectId: target }),
    onSuccess: (s) => navigate(`/builder/${s.id}`),
  });
  const s = share.data;
  return (
    <Page title={s ? `Shared: ${s.title}` : 'Shared session'}>
      <ErrorNote error={share.error} />
      {share.isLoading && <Loading />}
      {s && (
        <>
          <Facts
            items={[
              ['Access', s.access === 'remix' ? 'view and remix' : 'view'],
              ['Shared', <Time key="c" iso={s.createdAt} />],
              ['Expires', s.expiresAt ? <Time key="e" iso={s.expiresAt} /> : 'when revoked'],
            ]}
          />
          <Section title="Files">
            <DataTable
              caption="Files of the shared checkpoint"
              rows={s.files}
              rowKey={(f) => f.path}
              empty="The shared checkpoint has no file."
              columns={[
                { header: 'Path', cell: (f) => <code>{f.path}</code> },
                { header: 'Bytes', cell: (f) => f.size },
              ]}
            />
          </Section>
          {s.access === 'remix' && (
            <Section title="Remix">
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  if (target) remix.mutate();
                }}
              >
                <SelectField
                  label="Into project"
                  value={target}
                  onChange={(e) => setProjectId(e.target.value)}
                  options={(projects.data?.projects ?? []).map((p) => ({ value: p.id, label: p.name }))}
                />
                <ErrorNote error={remix.error ?? projects.error} />
                <div className="form-actions">
                  <Button type="submit" variant="primary" busy={remix.isPending} disabled={!target}>
                    Remix into a new session
                  </Button>
                </div>
              </form>
            </Section>
          )}
        </>
      )}
    </Page>
  );
}
