import { type FormEvent, useState } from 'react';
import { NavLink, Route, Routes, useNavigate, useParams } from 'react-router';

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
  TextField,
  Time,
  TypeToConfirm,
} from '../../ui';
import { DeploymentLink, formatBytes, ProjectName, ProjectSelect } from '../databases/shared';

interface Bucket {
  id: string;
  name: string;
  s3Name: string;
  projectId: string | null;
  createdAt: string;
  usage?: { objects: number; bytes: number; measuredAt: string; partial: boolean };
}

interface Credential {
  keyId: string;
  accessKeyId: string;
  bucketId: string;
  name: string | null;
  kind: 'key' | 'link';
  deploymentId: string | null;
  createdAt: string;
}

interface NewCredential extends Credential {
  secretAccessKey: string;
  endpoint: string;
  bucket: string;
  region: string;
  forcePathStyle: boolean;
}

/** Object storage buckets, their scoped keys and the deployments they are linked to. */
export default function BucketsPage() {
  return (
    <Routes>
      <Route index element={<BucketList />} />
      <Route path=":id" element={<BucketDetail />} />
    </Routes>
  );
}

function BucketList() {
  const can = useCan();
  const list = useApi<{ buckets: Bucket[]; total: number }>('/platform/buckets?limit=100');
  return (
    <Page title="Buckets">
      <Section title="Your buckets">
        {list.isPending ? (
          <Loading what="Loading buckets" />
        ) : (
          <>
            <ErrorNote error={list.error} />
            <DataTable
              caption="Buckets"
              rows={list.data?.buckets}
              rowKey={(b) => b.id}
              empty="No buckets yet. Create one below, then make a key for it or link it to a deployment."
              columns={[
                { header: 'Name', cell: (b) => <NavLink to={`/buckets/${b.id}`}>{b.name}</NavLink> },
                { header: 'Store name', cell: (b) => <code>{b.s3Name}</code> },
                { header: 'Project', cell: (b) => <ProjectName id={b.projectId} /> },
                { header: 'Created', cell: (b) => <Time iso={b.createdAt} /> },
              ]}
            />
          </>
        )}
      </Section>
      {can('bucket.create') && <CreateBucket />}
    </Page>
  );
}

function CreateBucket() {
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [projectId, setProjectId] = useState('');
  const create = useChange<void, Bucket>('POST', '/platform/buckets', {
    invalidates: ['/platform/buckets'],
    body: () => ({ name, ...(projectId ? { projectId } : {}) }),
    onSuccess: (b) => navigate(`/buckets/${b.id}`),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Section title="Create a bucket">
      <form onSubmit={submit}>
        <TextField
          label="Name"
          hint="3 to 63 lowercase letters, digits and single “-”, e.g. user-uploads."
          value={name}
          onChange={(e) => setName(e.target.value)}
          required
          autoComplete="off"
        />
        <ProjectSelect value={projectId} onChange={setProjectId} />
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create bucket
          </Button>
        </div>
      </form>
    </Section>
  );
}

function BucketDetail() {
  const { id = '' } = useParams();
  const can = useCan();
  const navigate = useNavigate();
  const b = useApi<Bucket>(`/platform/buckets/${id}`);
  const [force, setForce] = useState(false);
  const remove = useChange<void, Bucket>(
    'DELETE',
    () => `/platform/buckets/${id}${qs({ force: force || undefined })}`,
    {
      invalidates: ['/platform/buckets'],
      onSuccess: () => navigate('/buckets'),
    },
  );
  if (b.isPending) return <Loading what="Loading the bucket" />;
  if (!b.data)
    return (
      <Page title="Bucket">
        <ErrorNote error={b.error} />
        <NavLink to="/buckets">Back to buckets</NavLink>
      </Page>
    );
  const bucket = b.data;
  const holds = bucket.usage ? bucket.usage.objects > 0 : false;
  return (
    <Page
      title={`Bucket ${bucket.name}`}
      actions={
        can('bucket.delete') && (
          <TypeToConfirm
            label="Delete bucket"
            name={bucket.name}
            what={`The bucket, its keys and its links are removed for good. ${
              holds
                ? 'It holds objects: it is deleted only with “Also delete every object” ticked.'
                : 'A bucket that holds objects is refused unless “Also delete every object” is ticked.'
            }`}
            onConfirm={() => remove.mutate()}
            busy={remove.isPending}
            error={remove.error}
          />
        )
      }
    >
      <p>
        <NavLink to="/buckets">All buckets</NavLink>
      </p>
      <Section title="Details">
        <Facts
          items={[
            ['Store name', <code key="s">{bucket.s3Name}</code>],
            ['Project', <ProjectName key="p" id={bucket.projectId} />],
            [
              'Holds',
              bucket.usage
                ? `${bucket.usage.partial ? 'at least ' : ''}${bucket.usage.objects} objects, ${formatBytes(bucket.usage.bytes)}`
                : '—',
            ],
            ['Created', <Time key="c" iso={bucket.createdAt} />],
          ]}
        />
        {can('bucket.delete') && (
          <div className="field">
            <label>
              <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> Also delete every
              object when deleting the bucket (needed while it holds objects)
            </label>
          </div>
        )}
      </Section>
      <Keys bucket={bucket} />
      <Links bucket={bucket} />
    </Page>
  );
}

function Keys({ bucket }: { bucket: Bucket }) {
  const can = useCan();
  const base = `/platform/buckets/${bucket.id}/credentials`;
  const list = useApi<{ credentials: Credential[] }>(base);
  const [name, setName] = useState('');
  // The secret lives in this component's state only: it is gone after a reload, as the api keeps nothing of it.
  const [made, setMade] = useState<NewCredential | undefined>();
  const create = useChange<void, NewCredential>('POST', base, {
    invalidates: [base],
    body: () => (name ? { name } : {}),
    onSuccess: (c) => {
      setMade(c);
      setName('');
    },
  });
  const revoke = useChange<string>('DELETE', (keyId) => `${base}/${keyId}`, { invalidates: [base] });
  const manage = can('bucket.credentials');
  return (
    <Section title="Keys">
      {made && (
        <>
          <SecretOnce label={`Secret access key of ${made.accessKeyId}`} value={made.secretAccessKey} />
          <Facts
            items={[
              ['Access key ID', <code key="a">{made.accessKeyId}</code>],
              ['Endpoint', <code key="e">{made.endpoint}</code>],
              ['Bucket', <code key="b">{made.bucket}</code>],
              ['Region', made.region],
              ['Path-style addressing', made.forcePathStyle ? 'yes' : 'no'],
            ]}
          />
          <Button onClick={() => setMade(undefined)}>I have stored it</Button>
        </>
      )}
      <ErrorNote error={list.error} />
      <DataTable
        caption="Keys"
        rows={list.data?.credentials}
        rowKey={(c) => c.keyId}
        empty="No keys yet. A key opens this bucket only; its secret is shown once, when it is made."
        columns={[
          { header: 'Access key ID', cell: (c) => <code>{c.accessKeyId}</code> },
          { header: 'Name', cell: (c) => c.name ?? <span className="muted">—</span> },
          {
            header: 'Kind',
            cell: (c) =>
              c.kind === 'link' && c.deploymentId ? (
                <>
                  link of <DeploymentLink id={c.deploymentId} />
                </>
              ) : (
                'key'
              ),
          },
          { header: 'Created', cell: (c) => <Time iso={c.createdAt} /> },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (c) =>
              manage && c.kind === 'key' ? (
                <Button
                  variant="danger"
                  aria-label={`Revoke key ${c.accessKeyId}`}
                  busy={revoke.isPending && revoke.variables === c.keyId}
                  onClick={() => revoke.mutate(c.keyId)}
                >
                  Revoke
                </Button>
              ) : null,
          },
        ]}
      />
      <ErrorNote error={revoke.error} />
      {manage && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <TextField
            label="Key name (optional)"
            hint="A note of what the key is for."
            value={name}
            onChange={(e) => setName(e.target.value)}
            autoComplete="off"
          />
          <ErrorNote error={create.error} />
          <div className="form-actions">
            <Button type="submit" variant="primary" busy={create.isPending}>
              Make a key
            </Button>
          </div>
        </form>
      )}
    </Section>
  );
}

function Links({ bucket }: { bucket: Bucket }) {
  const can = useCan();
  const base = `/platform/buckets/${bucket.id}/links`;
  const links = useApi<{ links: Array<{ deploymentId: string; env: string[] }> }>(base);
  const [deploymentId, setDeploymentId] = useState('');
  const canLink = can('bucket.create') && can('deployment.read');
  const deployments = useApi<{ deployments: Array<{ id: string; name: string }> }>(
    canLink ? '/platform/deployments?limit=100' : undefined,
  );
  const link = useChange<void>('POST', base, {
    invalidates: [base, `/platform/buckets/${bucket.id}/credentials`],
    body: () => ({ deploymentId }),
    onSuccess: () => setDeploymentId(''),
  });
  const unlink = useChange<string>('DELETE', (d) => `${base}/${d}`, {
    invalidates: [base, `/platform/buckets/${bucket.id}/credentials`],
  });
  const names = new Map((deployments.data?.deployments ?? []).map((d) => [d.id, d.name]));
  return (
    <Section title="Linked deployments">
      <ErrorNote error={links.error} />
      <DataTable
        caption="Linked deployments"
        rows={links.data?.links}
        rowKey={(l) => l.deploymentId}
        empty="Not linked to any deployment. Linking gives a deployment S3_* variables and a key of its own, as a new release."
        columns={[
          {
            header: 'Deployment',
            cell: (l) => <DeploymentLink id={l.deploymentId} name={names.get(l.deploymentId)} />,
          },
          { header: 'Variables', cell: (l) => <code>{l.env.join(', ')}</code> },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (l) =>
              can('bucket.delete') ? (
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
          <ErrorNote error={link.error} />
          <div className="form-actions">
            <Button type="submit" busy={link.isPending} disabled={!deploymentId}>
              Link bucket
            </Button>
          </div>
        </form>
      )}
    </Section>
  );
}
