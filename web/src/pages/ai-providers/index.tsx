import { type FormEvent, useState } from 'react';

import { useApi, useChange } from '../../api/hooks';
import { useCan } from '../../api/session';
import {
  Button,
  DataTable,
  ErrorNote,
  Loading,
  Page,
  Section,
  SelectField,
  StatusBadge,
  TextField,
  TypeToConfirm,
} from '../../ui';

interface Provider {
  id: string;
  name: string;
  kind: 'openai_compatible' | 'anthropic';
  baseUrl: string;
  defaultModel: string;
  models: string[];
  enabled: boolean;
  createdAt: string;
}

type TestResult = { ok: true; models: string[] } | { ok: false; error: string; message: string };

const BASE = '/platform/ai-providers';

/** The organisation's AI providers: the builder and database questions use them; a key goes in and never out. */
export default function AiProvidersPage() {
  const can = useCan();
  if (!can('ai_provider.manage'))
    return (
      <Page title="AI providers">
        <p>
          Only the organisation’s owners and admins manage AI providers. Ask one of them to add or change a provider.
        </p>
      </Page>
    );
  return <Providers />;
}

function Providers() {
  const list = useApi<Provider[]>(BASE);
  return (
    <Page title="AI providers">
      <Section title="Providers">
        {list.isPending ? (
          <Loading what="Loading providers" />
        ) : (
          <>
            <ErrorNote error={list.error} />
            <DataTable
              caption="AI providers"
              rows={list.data}
              rowKey={(p) => p.id}
              empty="No AI providers yet. Add one below with its API key; the builder and database questions use it."
              columns={[
                { header: 'Name', cell: (p) => p.name },
                { header: 'Kind', cell: (p) => (p.kind === 'anthropic' ? 'Anthropic' : 'OpenAI-compatible') },
                { header: 'Address', cell: (p) => <code>{p.baseUrl}</code> },
                { header: 'Default model', cell: (p) => <code>{p.defaultModel}</code> },
                { header: 'State', cell: (p) => <StatusBadge status={p.enabled ? 'active' : 'stopped'} /> },
                { header: 'Actions', hiddenHeader: true, cell: (p) => <ProviderActions provider={p} /> },
              ]}
            />
          </>
        )}
      </Section>
      <AddProvider />
    </Page>
  );
}

function ProviderActions({ provider }: { provider: Provider }) {
  const test = useChange<void, TestResult>('POST', `${BASE}/${provider.id}/test`, { body: () => ({}) });
  const remove = useChange<void>('DELETE', `${BASE}/${provider.id}`, { invalidates: [BASE] });
  const r = test.data;
  return (
    <div className="page-actions">
      <Button aria-label={`Test ${provider.name}`} onClick={() => test.mutate()} busy={test.isPending}>
        Test
      </Button>
      <TypeToConfirm
        label={`Remove ${provider.name}`}
        name={provider.name}
        what="Sessions that chose this provider need another before their next message."
        onConfirm={() => remove.mutate()}
        busy={remove.isPending}
        error={remove.error}
      />
      <ErrorNote error={test.error} />
      {r && !r.ok && <ErrorNote error={`Test failed (${r.error}): ${r.message}`} />}
      {r?.ok && (
        <p role="status">
          Works: {r.models.length} models{r.models.length ? ` (${r.models.slice(0, 5).join(', ')}…)` : ''}.
        </p>
      )}
    </div>
  );
}

function AddProvider() {
  const empty = { name: '', kind: 'openai_compatible', baseUrl: '', apiKey: '', defaultModel: '', models: '' };
  const [f, setF] = useState(empty);
  const set = (k: keyof typeof f) => (e: { target: { value: string } }) => setF({ ...f, [k]: e.target.value });
  const add = useChange<void, Provider>('POST', BASE, {
    invalidates: [BASE],
    body: () => {
      const models = f.models
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean);
      return {
        name: f.name,
        kind: f.kind,
        baseUrl: f.baseUrl,
        apiKey: f.apiKey,
        defaultModel: f.defaultModel,
        ...(models.length ? { models } : {}),
      };
    },
    // The key leaves the page with the form: it is never shown again.
    onSuccess: () => setF(empty),
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    add.mutate();
  };
  return (
    <Section title="Add a provider">
      <form onSubmit={submit}>
        <TextField label="Name" value={f.name} onChange={set('name')} required autoComplete="off" />
        <SelectField
          label="Kind"
          value={f.kind}
          onChange={set('kind')}
          options={[
            { value: 'openai_compatible', label: 'OpenAI-compatible' },
            { value: 'anthropic', label: 'Anthropic' },
          ]}
        />
        <TextField
          label="Base URL"
          hint="OpenAI-compatible: the API prefix with its version, e.g. https://api.openai.com/v1; Anthropic: https://api.anthropic.com."
          value={f.baseUrl}
          onChange={set('baseUrl')}
          required
          autoComplete="off"
        />
        <TextField
          label="API key"
          type="password"
          hint="Stored encrypted; it is never shown again after saving."
          value={f.apiKey}
          onChange={set('apiKey')}
          required
          autoComplete="new-password"
        />
        <TextField
          label="Default model"
          value={f.defaultModel}
          onChange={set('defaultModel')}
          required
          autoComplete="off"
        />
        <TextField
          label="Other models (optional)"
          hint="Comma-separated model IDs a session may choose."
          value={f.models}
          onChange={set('models')}
          autoComplete="off"
        />
        <ErrorNote error={add.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={add.isPending}>
            Add provider
          </Button>
        </div>
      </form>
    </Section>
  );
}
