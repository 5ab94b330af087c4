import { type FormEvent, useState } from 'react';

import { useApi, useChange } from '../../api/hooks';
import { useCan, useMe } from '../../api/session';
import {
  Button,
  DataTable,
  Dialog,
  ErrorNote,
  Loading,
  Page,
  SecretOnce,
  Section,
  SelectField,
  StatusBadge,
  TextField,
  Time,
} from '../../ui';

// GET /platform/tokens (api/features/tokens/schemas.ts, TokenSummary).
interface Token {
  id: string;
  name: string;
  scopes: string[];
  expiresAt: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

const EXPIRIES = [
  { value: '1h', label: '1 hour' },
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
  { value: '90d', label: '90 days' },
  { value: '365d', label: '365 days' },
];

export default function TokensPage() {
  const can = useCan();
  const me = useMe();
  return (
    <Page title="Tokens">
      <p className="muted">
        Access tokens act as you ({me.user.email}, {me.user.role}) with the scopes they carry, for the CLI, scripts and
        agents. Revoking the token this console signed in with also ends this session.
      </p>
      {can('token.manage') ? (
        <>
          <CreateToken />
          <TokenList />
        </>
      ) : (
        <p>This session may not manage tokens (it needs token.manage).</p>
      )}
    </Page>
  );
}

function CreateToken() {
  const me = useMe();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>([]);
  const [expiresIn, setExpiresIn] = useState('90d');
  const [created, setCreated] = useState<{ name: string; token: string }>();
  const create = useChange<unknown, Token & { token: string }>('POST', '/platform/tokens', {
    invalidates: ['/platform/tokens'],
    onSuccess: (t) => {
      setCreated({ name: t.name, token: t.token });
      setName('');
      setScopes([]);
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    setCreated(undefined);
    create.mutate({ name: name.trim(), scopes, expiresIn });
  }
  const toggle = (s: string, on: boolean) => setScopes((cur) => (on ? [...cur, s] : cur.filter((x) => x !== s)));
  return (
    <Section title="Create a token">
      <form onSubmit={submit}>
        <TextField label="Token name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        <fieldset className="org-scopes">
          <legend>Scopes (only those your role and this session hold)</legend>
          {me.permissions.map((s) => (
            <div key={s} className="org-check">
              <input
                id={`scope-${s}`}
                type="checkbox"
                checked={scopes.includes(s)}
                onChange={(e) => toggle(s, e.target.checked)}
              />
              <label htmlFor={`scope-${s}`}>{s}</label>
            </div>
          ))}
        </fieldset>
        <div className="form-actions">
          <Button onClick={() => setScopes(me.permissions.filter((s) => s.endsWith('.read')))}>Read-only scopes</Button>
          <Button onClick={() => setScopes([...me.permissions])}>All scopes</Button>
          <Button onClick={() => setScopes([])}>None</Button>
        </div>
        <SelectField
          label="Expires in"
          value={expiresIn}
          onChange={(e) => setExpiresIn(e.target.value)}
          options={EXPIRIES}
          hint="The organisation may set a shorter maximum; a longer one is refused with that maximum named."
        />
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={create.isPending} disabled={scopes.length === 0}>
            Create token
          </Button>
        </div>
      </form>
      {created && <SecretOnce label={`Token “${created.name}”`} value={created.token} />}
    </Section>
  );
}

function TokenList() {
  const list = useApi<Token[]>('/platform/tokens');
  const [showRevoked, setShowRevoked] = useState(false);
  const rows = list.data?.filter((t) => showRevoked || !t.revokedAt);
  return (
    <Section title="Your tokens">
      <div className="org-check">
        <input
          id="tokens-show-revoked"
          type="checkbox"
          checked={showRevoked}
          onChange={(e) => setShowRevoked(e.target.checked)}
        />
        <label htmlFor="tokens-show-revoked">Show revoked tokens</label>
      </div>
      {list.isLoading && <Loading />}
      <ErrorNote error={list.error} />
      <DataTable
        caption="Your access tokens"
        rows={rows}
        rowKey={(t) => t.id}
        empty="No tokens: create one above."
        columns={[
          { header: 'Name', cell: (t) => t.name },
          { header: 'Scopes', cell: (t) => <span className="mono">{t.scopes.join(', ')}</span> },
          { header: 'Created', cell: (t) => <Time iso={t.createdAt} /> },
          { header: 'Last used', cell: (t) => <Time iso={t.lastUsedAt} /> },
          { header: 'Expires', cell: (t) => <Time iso={t.expiresAt} /> },
          {
            header: 'Status',
            cell: (t) => (
              <StatusBadge
                status={t.revokedAt ? 'revoked' : Date.parse(t.expiresAt) < Date.now() ? 'expired' : 'active'}
              />
            ),
          },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (t) => (t.revokedAt ? null : <RevokeButton token={t} />),
          },
        ]}
      />
    </Section>
  );
}

function RevokeButton({ token }: { token: Token }) {
  const [open, setOpen] = useState(false);
  const revoke = useChange<void, void>('DELETE', `/platform/tokens/${token.id}`, {
    invalidates: ['/platform/tokens'],
    onSuccess: () => setOpen(false),
  });
  return (
    <>
      <Button variant="danger" onClick={() => setOpen(true)} aria-label={`Revoke ${token.name}`}>
        Revoke
      </Button>
      <Dialog
        open={open}
        onOpenChange={setOpen}
        title={`Revoke token “${token.name}”?`}
        description="Anything using it is refused from now on, and a console session opened with it ends. This cannot be undone."
      >
        <ErrorNote error={revoke.error} />
        <div className="form-actions">
          <Button onClick={() => setOpen(false)}>Cancel</Button>
          <Button variant="danger" busy={revoke.isPending} onClick={() => revoke.mutate()}>
            Revoke token
          </Button>
        </div>
      </Dialog>
    </>
  );
}
