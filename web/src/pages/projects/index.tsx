import { type FormEvent, useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';

import { ApiError, get, qs } from '../../api/client';
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
  TextField,
  Time,
  TypeToConfirm,
} from '../../ui';

/** The shapes of api/features/projects/schemas.ts, as the console reads them. */
interface Project {
  id: string;
  name: string;
  description?: string;
  framework?: string;
  repoUrl?: string;
  gitBranch?: string;
  vaultEnvironment?: string;
  createdAt: string;
  updatedAt: string;
  createdBy: string;
  deploymentCount?: number;
}
interface ProjectList {
  projects: Project[];
  total: number;
}
const ROLES = ['admin', 'developer', 'viewer'] as const;
type Role = (typeof ROLES)[number];
interface Member {
  userId: string;
  email?: string;
  name?: string;
  role: Role;
  addedAt: string;
}
interface OrgUser {
  id: string;
  email: string;
}

const ROLE_OPTIONS = ROLES.map((r) => ({ value: r, label: r }));

export default function ProjectsPage() {
  return (
    <Routes>
      <Route index element={<ProjectListView />} />
      <Route path=":id" element={<ProjectView />} />
    </Routes>
  );
}

function ProjectListView() {
  const can = useCan();
  const list = useApi<ProjectList>(`/platform/projects${qs({ limit: 100 })}`);
  return (
    <Page title="Projects">
      {can('project.create') && <CreateProject />}
      <Section title={list.data ? `Projects (${list.data.total})` : 'Projects'}>
        {list.isPending && <Loading what="Loading projects" />}
        <ErrorNote error={list.error} />
        <DataTable
          caption="Projects of the organisation"
          rows={list.data?.projects}
          rowKey={(p) => p.id}
          empty="No project yet: create one above, then deploy into it with its ID."
          columns={[
            { header: 'Name', cell: (p) => <Link to={p.id}>{p.name}</Link> },
            { header: 'Framework', cell: (p) => p.framework ?? '—' },
            { header: 'Description', cell: (p) => p.description ?? '—' },
            { header: 'Created', cell: (p) => <Time iso={p.createdAt} /> },
          ]}
        />
        {list.data && list.data.total > list.data.projects.length && (
          <p className="muted">
            The first {list.data.projects.length} of {list.data.total}, by name.
          </p>
        )}
      </Section>
    </Page>
  );
}

function CreateProject() {
  const navigate = useNavigate();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [framework, setFramework] = useState('');
  const create = useChange<void, Project>('POST', '/platform/projects', {
    invalidates: ['/platform/projects'],
    body: () => ({
      name,
      ...(description ? { description } : {}),
      ...(framework ? { framework } : {}),
    }),
    onSuccess: (p) => navigate(p.id),
  });
  return (
    <Section title="Create a project">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate();
        }}
      >
        <TextField
          label="Name"
          required
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint="Unique in the organisation; you become its admin."
        />
        <TextField label="Description" value={description} onChange={(e) => setDescription(e.target.value)} />
        <TextField
          label="Framework"
          value={framework}
          onChange={(e) => setFramework(e.target.value)}
          hint="Informative, e.g. nextjs or django."
        />
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create project
          </Button>
        </div>
      </form>
    </Section>
  );
}

function ProjectView() {
  const { id = '' } = useParams();
  const can = useCan();
  const project = useApi<Project>(`/platform/projects/${id}`);
  const p = project.data;
  return (
    <Page title={p ? `Project ${p.name}` : 'Project'} actions={<Link to="..">All projects</Link>}>
      {project.isPending && <Loading what="Loading the project" />}
      <ErrorNote error={project.error} />
      {p && (
        <>
          <Section title="Details">
            <Facts
              items={[
                ['ID', <code key="id">{p.id}</code>],
                ['Live deployments', p.deploymentCount ?? 0],
                ['Repository', p.repoUrl ? `${p.repoUrl}${p.gitBranch ? ` (${p.gitBranch})` : ''}` : '—'],
                ['Vault environment', p.vaultEnvironment ?? 'PRODUCTION'],
                ['Created', <Time key="c" iso={p.createdAt} />],
                ['Updated', <Time key="u" iso={p.updatedAt} />],
              ]}
            />
          </Section>
          {can('project.update') && <EditProject project={p} />}
          <Members project={p} />
          {can('project.delete') && <DeleteProject project={p} />}
        </>
      )}
    </Page>
  );
}

function EditProject({ project }: { project: Project }) {
  const [name, setName] = useState(project.name);
  const [description, setDescription] = useState(project.description ?? '');
  const [framework, setFramework] = useState(project.framework ?? '');
  const [saved, setSaved] = useState(false);
  const update = useChange<void, Project>('PUT', `/platform/projects/${project.id}`, {
    invalidates: ['/platform/projects'],
    // An emptied optional field is removed (null), as the api takes it.
    body: () => ({ name, description: description || null, framework: framework || null }),
    onSuccess: () => setSaved(true),
  });
  return (
    <Section title="Rename or describe">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          setSaved(false);
          update.mutate();
        }}
      >
        <TextField label="Project name" required value={name} onChange={(e) => setName(e.target.value)} />
        <TextField label="Project description" value={description} onChange={(e) => setDescription(e.target.value)} />
        <TextField label="Project framework" value={framework} onChange={(e) => setFramework(e.target.value)} />
        <ErrorNote error={update.error} />
        {saved && <p role="status">Saved.</p>}
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={update.isPending}>
            Save project
          </Button>
        </div>
      </form>
    </Section>
  );
}

function Members({ project }: { project: Project }) {
  const can = useCan();
  const manage = can('project.members.manage');
  const path = `/platform/projects/${project.id}/members`;
  const members = useApi<Member[]>(path);
  const setRole = useChange<{ userId: string; role: Role }, Member>('PATCH', (m) => `${path}/${m.userId}`, {
    invalidates: [path],
    body: (m) => ({ role: m.role }),
  });
  const remove = useChange<string>('DELETE', (userId) => `${path}/${userId}`, { invalidates: [path] });
  return (
    <Section title="Members">
      {members.isPending && <Loading what="Loading members" />}
      <ErrorNote error={members.error} />
      <DataTable
        caption={`Members of ${project.name}`}
        rows={members.data}
        rowKey={(m) => m.userId}
        empty="No members."
        columns={[
          { header: 'User', cell: (m) => m.email ?? m.name ?? <code>{m.userId}</code> },
          {
            header: 'Role',
            cell: (m) =>
              manage ? (
                <select
                  aria-label={`Role of ${m.email ?? m.userId}`}
                  value={m.role}
                  disabled={setRole.isPending}
                  onChange={(e) => setRole.mutate({ userId: m.userId, role: e.target.value as Role })}
                >
                  {ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              ) : (
                m.role
              ),
          },
          { header: 'Added', cell: (m) => <Time iso={m.addedAt} /> },
          ...(manage
            ? [
                {
                  header: 'Actions',
                  hiddenHeader: true,
                  cell: (m: Member) => (
                    <Button
                      variant="danger"
                      aria-label={`Remove ${m.email ?? m.userId}`}
                      busy={remove.isPending && remove.variables === m.userId}
                      onClick={() => {
                        if (window.confirm(`Remove ${m.email ?? m.userId} from ${project.name}?`))
                          remove.mutate(m.userId);
                      }}
                    >
                      Remove
                    </Button>
                  ),
                },
              ]
            : []),
        ]}
      />
      <ErrorNote error={setRole.error ?? remove.error} />
      {manage && <AddMember path={path} />}
    </Section>
  );
}

/** Adds a member by user ID, or by e-mail when the session may list the organisation's users. */
function AddMember({ path }: { path: string }) {
  const can = useCan();
  const [who, setWho] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const [lookupError, setLookupError] = useState<unknown>();
  const add = useChange<{ userId: string; role: Role }, Member>('POST', path, {
    invalidates: [path],
    onSuccess: () => setWho(''),
  });
  async function submit(e: FormEvent) {
    e.preventDefault();
    setLookupError(undefined);
    let userId = who.trim();
    if (userId.includes('@')) {
      if (!can('user.manage')) {
        setLookupError(new Error("Give the user's ID: looking up e-mail addresses needs the user.manage permission."));
        return;
      }
      try {
        const users = await get<OrgUser[]>('/platform/users');
        const found = users.find((u) => u.email.toLowerCase() === userId.toLowerCase());
        if (!found) {
          setLookupError(new Error(`No user ${userId} in the organisation: add them under Users and roles first.`));
          return;
        }
        userId = found.id;
      } catch (err) {
        setLookupError(err instanceof ApiError ? err : new Error(String(err)));
        return;
      }
    }
    add.mutate({ userId, role });
  }
  return (
    <form onSubmit={(e) => void submit(e)} className="projects-add-member">
      <h3>Add a member</h3>
      <TextField
        label="User ID or e-mail"
        required
        value={who}
        onChange={(e) => setWho(e.target.value)}
        hint="A user of this organisation."
      />
      <SelectField
        label="Project role"
        value={role}
        onChange={(e) => setRole(e.target.value as Role)}
        options={ROLE_OPTIONS}
      />
      <ErrorNote error={lookupError ?? add.error} />
      <div className="form-actions">
        <Button type="submit" variant="primary" busy={add.isPending}>
          Add member
        </Button>
      </div>
    </form>
  );
}

function DeleteProject({ project }: { project: Project }) {
  const navigate = useNavigate();
  const live = project.deploymentCount ?? 0;
  const [force, setForce] = useState(false);
  const remove = useChange('DELETE', `/platform/projects/${project.id}${qs({ force: force ? 'true' : undefined })}`, {
    invalidates: ['/platform/projects'],
    onSuccess: () => navigate('..'),
  });
  return (
    <Section title="Delete">
      <p>Deleting a project removes its memberships. It is refused while the project has live deployments.</p>
      {live > 0 && (
        <label className="projects-check">
          <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} /> Also destroy its {live}{' '}
          live deployment{live === 1 ? '' : 's'}
        </label>
      )}
      <TypeToConfirm
        label="Delete project"
        name={project.name}
        what={`The project ${project.name} and its memberships are deleted${force ? ', its live deployments destroyed' : ''}.`}
        onConfirm={() => remove.mutate()}
        busy={remove.isPending}
        error={remove.error}
      />
    </Section>
  );
}
