import { type FormEvent, useState } from 'react';
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
  StatusBadge,
  TextField,
  Time,
  TypeToConfirm,
} from '../../ui';
import { DeploymentLink, intOrUndefined, ProjectName, ProjectSelect } from '../databases/shared';

interface Volume {
  id: string;
  name: string;
  sizeGb: number;
  projectId: string | null;
  status: string;
  error: string | null;
  createdAt: string;
  updatedAt: string;
  attachedTo?: { deploymentId: string; deploymentName: string; mountPath: string } | null;
}

/** Persistent volumes: storage of a fixed size that outlives the deployments mounting it. */
export default function VolumesPage() {
  return (
    <Routes>
      <Route index element={<VolumeList />} />
      <Route path=":id" element={<VolumeDetail />} />
    </Routes>
  );
}

function VolumeList() {
  const can = useCan();
  const list = useApi<{ volumes: Volume[]; total: number }>('/platform/volumes?limit=100');
  return (
    <Page title="Volumes">
      <Section title="Your volumes">
        {list.isPending ? (
          <Loading what="Loading volumes" />
        ) : (
          <>
            <ErrorNote error={list.error} />
            <DataTable
              caption="Volumes"
              rows={list.data?.volumes}
              rowKey={(v) => v.id}
              empty="No volumes yet. Create one below, then mount it in a deployment at a path such as /data."
              columns={[
                { header: 'Name', cell: (v) => <NavLink to={`/volumes/${v.id}`}>{v.name}</NavLink> },
                { header: 'Size', cell: (v) => `${v.sizeGb} GB` },
                { header: 'Project', cell: (v) => <ProjectName id={v.projectId} /> },
                { header: 'Status', cell: (v) => <StatusBadge status={v.status} /> },
                { header: 'Created', cell: (v) => <Time iso={v.createdAt} /> },
              ]}
            />
          </>
        )}
      </Section>
      {can('volume.create') && <CreateVolume />}
    </Page>
  );
}

function CreateVolume() {
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [size, setSize] = useState('1');
  const [projectId, setProjectId] = useState('');
  const create = useChange<void, Volume>('POST', '/platform/volumes', {
    invalidates: ['/platform/volumes'],
    body: () => ({ name, sizeGb: intOrUndefined(size), ...(projectId ? { projectId } : {}) }),
    onSuccess: (v) => navigate(`/volumes/${v.id}`),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Section title="Create a volume">
      <form onSubmit={submit}>
        <TextField
          label="Name"
          hint="Lowercase letters, digits and “-”, unique in the organisation."
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          autoComplete="off"
        />
        <TextField
          label="Size (GB)"
          hint="Whole gigabytes; a write past the size fails with “no space left on device”."
          type="number"
          min={1}
          value={size}
          onChange={(e) => setSize(e.target.value)}
          required
        />
        <ProjectSelect value={projectId} onChange={setProjectId} />
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create volume
          </Button>
        </div>
      </form>
    </Section>
  );
}

function VolumeDetail() {
  const { id = '' } = useParams();
  const can = useCan();
  const navigate = useNavigate();
  const v = useApi<Volume>(`/platform/volumes/${id}`);
  const remove = useChange<void, Volume>('DELETE', `/platform/volumes/${id}`, {
    invalidates: ['/platform/volumes'],
    onSuccess: () => navigate('/volumes'),
  });
  if (v.isPending) return <Loading what="Loading the volume" />;
  if (!v.data)
    return (
      <Page title="Volume">
        <ErrorNote error={v.error} />
        <NavLink to="/volumes">Back to volumes</NavLink>
      </Page>
    );
  const vol = v.data;
  return (
    <Page
      title={`Volume ${vol.name}`}
      actions={
        can('volume.delete') && (
          <TypeToConfirm
            label="Delete volume"
            name={vol.name}
            what={`Every byte on ${vol.name} is removed for good. A volume a deployment mounts cannot be deleted: detach it first.`}
            onConfirm={() => remove.mutate()}
            busy={remove.isPending}
            error={remove.error}
          />
        )
      }
    >
      <p>
        <NavLink to="/volumes">All volumes</NavLink>
      </p>
      <Section title="Details">
        <Facts
          items={[
            ['Status', <StatusBadge key="s" status={vol.status} />],
            ['Size', `${vol.sizeGb} GB`],
            ['Project', <ProjectName key="p" id={vol.projectId} />],
            ['Created', <Time key="c" iso={vol.createdAt} />],
            ['ID', <code key="i">{vol.id}</code>],
          ]}
        />
        {vol.error && <p className="error-note">{vol.error}</p>}
      </Section>
      <Section title="Attachments">
        {vol.attachedTo ? (
          <p>
            Mounted by deployment{' '}
            <DeploymentLink id={vol.attachedTo.deploymentId} name={vol.attachedTo.deploymentName} /> at{' '}
            <code>{vol.attachedTo.mountPath}</code>. Detach it from that deployment before deleting the volume.
          </p>
        ) : (
          <p>Not mounted by any deployment. Mount it from a deployment’s page (one deployment at a time).</p>
        )}
      </Section>
    </Page>
  );
}
