import { type FormEvent, useState } from 'react';

import { useApi, useChange } from '../../api/hooks';
import { useMe } from '../../api/session';
import { Button, DataTable, ErrorNote, Loading, Page, Section, SelectField, TextField, Time } from '../../ui';

// GET /platform/users (api/features/users/schemas.ts, User).
type Role = 'owner' | 'admin' | 'developer' | 'viewer';
interface User {
  id: string;
  email: string;
  name?: string;
  role: Role;
  createdAt: string;
}

const ROLES: Array<{ value: Role; label: string }> = [
  { value: 'viewer', label: 'Viewer: reads only' },
  { value: 'developer', label: 'Developer: deploys and builds' },
  { value: 'admin', label: 'Admin: also users, secrets, audit' },
  { value: 'owner', label: 'Owner: everything' },
];

export default function UsersPage() {
  const me = useMe();
  // Only an owner may grant or take away owner; the api refuses it anyway.
  const roles = me.user.role === 'owner' ? ROLES : ROLES.filter((r) => r.value !== 'owner');
  return (
    <Page title="Users and roles">
      <p className="muted">
        The organisation&apos;s people and their org roles. A new user gets access tokens from an operator (
        <code>slipway admin token create</code>) and then makes their own under Tokens.
      </p>
      <AddUser roles={roles} />
      <UserList roles={roles} meId={me.user.id} />
    </Page>
  );
}

function AddUser({ roles }: { roles: typeof ROLES }) {
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('developer');
  const [added, setAdded] = useState<string>();
  const add = useChange<unknown, User>('POST', '/platform/users', {
    invalidates: ['/platform/users'],
    onSuccess: (u) => {
      setAdded(`${u.email} added as ${u.role}.`);
      setEmail('');
      setName('');
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    setAdded(undefined);
    add.mutate({ email: email.trim(), role, ...(name.trim() ? { name: name.trim() } : {}) });
  }
  return (
    <Section title="Add a user">
      <form onSubmit={submit}>
        <TextField label="E-mail" type="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <TextField label="Name" maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        <SelectField label="Role" value={role} onChange={(e) => setRole(e.target.value as Role)} options={roles} />
        <ErrorNote error={add.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={add.isPending}>
            Add user
          </Button>
        </div>
      </form>
      {added && <p role="status">{added}</p>}
    </Section>
  );
}

function UserList({ roles, meId }: { roles: typeof ROLES; meId: string }) {
  const list = useApi<User[]>('/platform/users');
  return (
    <Section title="Users">
      {list.isLoading && <Loading />}
      <ErrorNote error={list.error} />
      <DataTable
        caption="The organisation's users"
        rows={list.data}
        rowKey={(u) => u.id}
        empty="No users."
        columns={[
          { header: 'E-mail', cell: (u) => (u.id === meId ? `${u.email} (you)` : u.email) },
          { header: 'Name', cell: (u) => u.name ?? '—' },
          { header: 'Added', cell: (u) => <Time iso={u.createdAt} /> },
          { header: 'Role', cell: (u) => <RoleControl user={u} roles={roles} /> },
        ]}
      />
    </Section>
  );
}

function RoleControl({ user, roles }: { user: User; roles: typeof ROLES }) {
  const [role, setRole] = useState<Role>(user.role);
  const change = useChange<void, User>('PATCH', `/platform/users/${user.id}`, {
    body: () => ({ role }),
    invalidates: ['/platform/users'],
  });
  // An admin sees an owner's role but cannot change it.
  if (!roles.some((r) => r.value === user.role)) return <span>{user.role}</span>;
  return (
    <form
      className="seller-row-actions"
      onSubmit={(e) => {
        e.preventDefault();
        change.mutate();
      }}
    >
      <label className="sr-only" htmlFor={`role-${user.id}`}>
        Role of {user.email}
      </label>
      <select id={`role-${user.id}`} value={role} onChange={(e) => setRole(e.target.value as Role)}>
        {roles.map((r) => (
          <option key={r.value} value={r.value}>
            {r.value}
          </option>
        ))}
      </select>
      <Button
        type="submit"
        disabled={role === user.role}
        busy={change.isPending}
        aria-label={`Change the role of ${user.email}`}
      >
        Change role
      </Button>
      <ErrorNote error={change.error} />
    </form>
  );
}
