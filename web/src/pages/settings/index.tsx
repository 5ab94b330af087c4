import { useState } from 'react';

import { useApi, useChange } from '../../api/hooks';
import { useCan } from '../../api/session';
import { Button, ErrorNote, Facts, Loading, Page, Section, SelectField, TextField, Time } from '../../ui';

/** The shapes of api/features/organization/schemas.ts, as the console reads them. */
const ENVIRONMENTS = ['DEVELOPMENT', 'STAGING', 'PRODUCTION'] as const;
const PROVIDERS = ['engine_local', 'cloud_a_run', 'cloud_b_container_apps', 'cloud_c_ecs_fargate'] as const;
interface Organization {
  id: string;
  plan: string;
  name: string;
  defaultVaultEnvironment: (typeof ENVIRONMENTS)[number];
  defaultProvider: string | null;
  allowedProviders: string[] | null;
  defaultRegion: string | null;
  tokenMaxLifetimeS: number | null;
  sandboxIdleS: number | null;
  effective: {
    defaultProvider: string;
    allowedProviders: string[];
    defaultRegion: string | null;
    tokenMaxLifetimeS: number;
    sandboxIdleS: number;
  };
  version: number;
  updatedAt: string | null;
  updatedBy: string | null;
}

const PATH = '/platform/organization';

/** "server default" beside a null setting, with what applies in its place. */
const orDefault = (v: unknown, effective: unknown) =>
  v === null || v === undefined ? `server default (${String(effective ?? 'none')})` : String(v);

export default function SettingsPage() {
  const can = useCan();
  const org = useApi<Organization>(PATH);
  const o = org.data;
  // Kept here: the form starts afresh from each version the api answers, this note outlives it.
  const [saved, setSaved] = useState(false);
  return (
    <Page title="Organisation settings">
      {org.isPending && <Loading what="Loading the settings" />}
      <ErrorNote error={org.error} />
      {o && (
        <>
          <Section title="Now in force">
            <Facts
              items={[
                ['Name', o.name],
                ['Plan', o.plan],
                ['Default vault environment', o.defaultVaultEnvironment],
                ['Default provider', orDefault(o.defaultProvider, o.effective.defaultProvider)],
                [
                  'Allowed providers',
                  o.allowedProviders?.join(', ') ??
                    `every one of the plan's (${o.effective.allowedProviders.join(', ')})`,
                ],
                ['Default region', orDefault(o.defaultRegion, o.effective.defaultRegion)],
                ['Longest token lifetime (s)', orDefault(o.tokenMaxLifetimeS, o.effective.tokenMaxLifetimeS)],
                ['Idle builder sandbox stopped after (s)', orDefault(o.sandboxIdleS, o.effective.sandboxIdleS)],
                ['Last changed', <Time key="u" iso={o.updatedAt} />],
              ]}
            />
          </Section>
          {saved && <p role="status">Saved. The header shows a new name after a reload.</p>}
          {can('organization.manage') ? (
            // Keyed by version: a saved change resets the form to what the api now holds.
            <SettingsForm key={o.version} org={o} onSaving={() => setSaved(false)} onSaved={() => setSaved(true)} />
          ) : (
            <p className="muted">Only owners and admins change these settings.</p>
          )}
        </>
      )}
    </Page>
  );
}

/** A number field's text as the api takes it: empty is null (the server's default). */
const numberOrNull = (s: string) => (s.trim() === '' ? null : Number(s));

function SettingsForm({ org, onSaving, onSaved }: { org: Organization; onSaving: () => void; onSaved: () => void }) {
  const [name, setName] = useState(org.name);
  const [env, setEnv] = useState<string>(org.defaultVaultEnvironment);
  const [provider, setProvider] = useState(org.defaultProvider ?? '');
  const [allowed, setAllowed] = useState<string[]>(org.allowedProviders ?? []);
  const [region, setRegion] = useState(org.defaultRegion ?? '');
  const [tokenMax, setTokenMax] = useState(org.tokenMaxLifetimeS?.toString() ?? '');
  const [idle, setIdle] = useState(org.sandboxIdleS?.toString() ?? '');
  const save = useChange<void, Organization>('PATCH', PATH, {
    invalidates: [PATH],
    // Only what changed is sent: a field left as it was is not re-validated against rules that moved since.
    body: () => {
      const b: Record<string, unknown> = {};
      if (name !== org.name) b.name = name;
      if (env !== org.defaultVaultEnvironment) b.defaultVaultEnvironment = env;
      if ((provider || null) !== org.defaultProvider) b.defaultProvider = provider || null;
      const allowedNow = allowed.length ? allowed : null;
      if (JSON.stringify(allowedNow) !== JSON.stringify(org.allowedProviders)) b.allowedProviders = allowedNow;
      if ((region.trim() || null) !== org.defaultRegion) b.defaultRegion = region.trim() || null;
      if (numberOrNull(tokenMax) !== org.tokenMaxLifetimeS) b.tokenMaxLifetimeS = numberOrNull(tokenMax);
      if (numberOrNull(idle) !== org.sandboxIdleS) b.sandboxIdleS = numberOrNull(idle);
      return b;
    },
    onSuccess: onSaved,
  });
  return (
    <Section title="Change settings">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onSaving();
          save.mutate();
        }}
      >
        <TextField
          label="Organisation name"
          required
          maxLength={100}
          value={name}
          onChange={(e) => setName(e.target.value)}
        />
        <SelectField
          label="Default vault environment"
          value={env}
          onChange={(e) => setEnv(e.target.value)}
          options={ENVIRONMENTS.map((v) => ({ value: v, label: v }))}
          hint="Of a secret created without one, and the vault a source deploy reads when it names none."
        />
        <SelectField
          label="Default provider"
          value={provider}
          onChange={(e) => setProvider(e.target.value)}
          options={[{ value: '', label: 'server default' }, ...PROVIDERS.map((p) => ({ value: p, label: p }))]}
        />
        <fieldset className="settings-providers">
          <legend>Allowed providers (none ticked: every provider of the plan)</legend>
          {PROVIDERS.map((p) => (
            <label key={p}>
              <input
                type="checkbox"
                checked={allowed.includes(p)}
                onChange={(e) => setAllowed(e.target.checked ? [...allowed, p] : allowed.filter((x) => x !== p))}
              />{' '}
              {p}
            </label>
          ))}
        </fieldset>
        <TextField
          label="Default region"
          value={region}
          onChange={(e) => setRegion(e.target.value)}
          hint="One of the default provider's regions; empty: its first."
        />
        <TextField
          label="Longest token lifetime (seconds)"
          type="number"
          min={1}
          value={tokenMax}
          onChange={(e) => setTokenMax(e.target.value)}
          hint="Tokens asked for longer are refused; empty: the server's ceiling. Existing tokens keep their expiry."
        />
        <TextField
          label="Stop an idle builder sandbox after (seconds)"
          type="number"
          min={1}
          value={idle}
          onChange={(e) => setIdle(e.target.value)}
          hint="Empty: the server's default."
        />
        <ErrorNote error={save.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={save.isPending}>
            Save settings
          </Button>
        </div>
      </form>
    </Section>
  );
}
