import { type FormEvent, useState } from 'react';

import { useApi, useChange } from '../../api/hooks';
import {
  Button,
  DataTable,
  Dialog,
  ErrorNote,
  Loading,
  Page,
  Section,
  SelectField,
  TextArea,
  TextField,
  Time,
  TypeToConfirm,
} from '../../ui';

// GET /platform/secrets (api/features/secrets/schemas.ts, SecretSummary): names, never values.
interface Secret {
  id: string;
  name: string;
  environment: 'DEVELOPMENT' | 'STAGING' | 'PRODUCTION';
  allowedHosts?: string[];
  createdAt: string;
  updatedAt: string | null;
}

const ENVIRONMENTS = [
  { value: '', label: "The organisation's default" },
  { value: 'PRODUCTION', label: 'Production' },
  { value: 'STAGING', label: 'Staging' },
  { value: 'DEVELOPMENT', label: 'Development' },
];

export default function SecretsPage() {
  return (
    <Page title="Secrets">
      <p className="muted">
        Values are encrypted when saved and never shown again, here or anywhere: builds use them (a Git token for a
        private repository). To change one, replace its value.
      </p>
      <CreateSecret />
      <SecretList />
    </Page>
  );
}

function CreateSecret() {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [environment, setEnvironment] = useState('');
  const [hosts, setHosts] = useState('');
  const [saved, setSaved] = useState<string>();
  const create = useChange<unknown, Secret>('POST', '/platform/secrets', {
    invalidates: ['/platform/secrets'],
    onSuccess: (s) => {
      setSaved(`Secret ${s.name} saved in ${s.environment}. Its value is not shown again.`);
      setName('');
      setValue('');
      setHosts('');
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    setSaved(undefined);
    const allowedHosts = hosts
      .split(/[\s,]+/)
      .map((h) => h.trim())
      .filter(Boolean);
    create.mutate({
      name: name.trim(),
      value,
      ...(environment ? { environment } : {}),
      ...(allowedHosts.length ? { allowedHosts } : {}),
    });
  }
  return (
    <Section title="Add a secret">
      <form onSubmit={submit}>
        <TextField
          label="Secret name"
          required
          maxLength={128}
          pattern="[A-Za-z0-9_.\-]+"
          value={name}
          onChange={(e) => setName(e.target.value)}
          hint='Letters, digits, "_", "." and "-"; unique per environment.'
        />
        <TextArea
          label="Value"
          required
          rows={3}
          autoComplete="off"
          spellCheck={false}
          value={value}
          onChange={(e) => setValue(e.target.value)}
        />
        <SelectField
          label="Environment"
          value={environment}
          onChange={(e) => setEnvironment(e.target.value)}
          options={ENVIRONMENTS}
        />
        <TextField
          label="Allowed hosts"
          value={hosts}
          onChange={(e) => setHosts(e.target.value)}
          hint="For a Git token: the hosts it may be sent to, separated by spaces or commas (e.g. github.com). Required to use it as gitTokenSecretId."
        />
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Save secret
          </Button>
        </div>
      </form>
      {saved && <p role="status">{saved}</p>}
    </Section>
  );
}

function SecretList() {
  const list = useApi<Secret[]>('/platform/secrets');
  return (
    <Section title="Secrets">
      {list.isLoading && <Loading />}
      <ErrorNote error={list.error} />
      <DataTable
        caption="The organisation's secrets"
        rows={list.data}
        rowKey={(s) => s.id}
        empty="No secrets yet: add one above."
        columns={[
          { header: 'Name', cell: (s) => <code>{s.name}</code> },
          { header: 'Environment', cell: (s) => s.environment },
          { header: 'Allowed hosts', cell: (s) => s.allowedHosts?.join(', ') ?? '—' },
          { header: 'Created', cell: (s) => <Time iso={s.createdAt} /> },
          { header: 'Value replaced', cell: (s) => <Time iso={s.updatedAt} /> },
          { header: 'ID', cell: (s) => <code>{s.id}</code> },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (s) => (
              <div className="seller-row-actions">
                <ReplaceValue secret={s} />
                <DeleteSecret secret={s} />
              </div>
            ),
          },
        ]}
      />
    </Section>
  );
}

function ReplaceValue({ secret }: { secret: Secret }) {
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState('');
  const replace = useChange<void, Secret>('PUT', `/platform/secrets/${secret.id}`, {
    body: () => ({ value }),
    invalidates: ['/platform/secrets'],
    onSuccess: () => {
      setValue('');
      setOpen(false);
    },
  });
  return (
    <>
      <Button onClick={() => setOpen(true)} aria-label={`Replace the value of ${secret.name}`}>
        Replace value
      </Button>
      <Dialog
        open={open}
        onOpenChange={(o) => {
          setOpen(o);
          if (!o) setValue('');
        }}
        title={`Replace the value of ${secret.name}`}
        description="Builds use the new value from now on; the old one is gone. Neither is shown again."
      >
        <form
          onSubmit={(e) => {
            e.preventDefault();
            replace.mutate();
          }}
        >
          <TextArea
            label="New value"
            required
            rows={3}
            autoComplete="off"
            spellCheck={false}
            value={value}
            onChange={(e) => setValue(e.target.value)}
          />
          <ErrorNote error={replace.error} />
          <div className="form-actions">
            <Button onClick={() => setOpen(false)}>Cancel</Button>
            <Button type="submit" variant="primary" busy={replace.isPending}>
              Save new value
            </Button>
          </div>
        </form>
      </Dialog>
    </>
  );
}

function DeleteSecret({ secret }: { secret: Secret }) {
  const remove = useChange<void, void>('DELETE', `/platform/secrets/${secret.id}`, {
    invalidates: ['/platform/secrets'],
  });
  return (
    <TypeToConfirm
      label={`Delete ${secret.name}`}
      name={secret.name}
      what="Builds that use it (a private repository's Git token) fail from now on. This cannot be undone."
      onConfirm={() => remove.mutate()}
      busy={remove.isPending}
      error={remove.error}
    />
  );
}
