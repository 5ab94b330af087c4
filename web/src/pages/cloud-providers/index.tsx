import { type FormEvent, useState } from 'react';

import { useApi, useChange } from '../../api/hooks';
import { useCan } from '../../api/session';
import { Button, Dialog, ErrorNote, Facts, Loading, Page, Section, TextArea, Time, TypeToConfirm } from '../../ui';

/** GET /platform/providers/credentials (api/features/cloud-providers/schemas.ts): never a secret. */
interface CredentialsSummary {
  provider: CloudId;
  identity: string;
  regions: string[];
  registry: string | null;
  verifiedAt: string;
  updatedAt: string;
  updatedBy: string;
}

/** GET /compat/providers: whether the plan and the organisation's credentials allow each provider. */
interface Availability {
  id: string;
  name: string;
  available: boolean;
  reason?: string;
  regions: string[];
}

const CLOUDS = ['cloud_a_run', 'cloud_b_container_apps', 'cloud_c_ecs_fargate'] as const;
type CloudId = (typeof CLOUDS)[number];

const LIST = '/platform/providers/credentials';
const AVAILABILITY = '/compat/providers';
const credentialsPath = (id: CloudId) => `/platform/providers/${id}/credentials`;

/**
 * Each cloud's credentials as shared/cloud/credentials.ts takes them, with placeholders: a starting point the person
 * fills in, so the fields' names are never guessed. Optional fields are said in `optional`, not left out, so the
 * template shows every field there is.
 */
const TEMPLATES: Record<CloudId, { fields: string; template: object }> = {
  cloud_a_run: {
    fields:
      'serviceAccountKey is the key JSON exactly as Google Cloud downloads it (roles Cloud Run Admin and Logs Viewer). Optional: registry.',
    template: {
      serviceAccountKey: {
        type: 'service_account',
        project_id: 'my-project',
        client_email: 'slipway@my-project.iam.gserviceaccount.com',
        private_key: '-----BEGIN PRIVATE KEY-----\n…\n-----END PRIVATE KEY-----\n',
      },
      regions: ['europe-west1'],
      registry: { repository: 'europe-west1-docker.pkg.dev/my-project/apps' },
    },
  },
  cloud_b_container_apps: {
    fields:
      'A service principal, its resource group and Container Apps environment. Optional: logAnalyticsWorkspaceId (for logs), registry.',
    template: {
      tenantId: '00000000-0000-0000-0000-000000000000',
      clientId: '00000000-0000-0000-0000-000000000000',
      clientSecret: '…',
      subscriptionId: '00000000-0000-0000-0000-000000000000',
      resourceGroup: 'apps',
      environmentId:
        '/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/apps/providers/Microsoft.App/managedEnvironments/apps',
      logAnalyticsWorkspaceId: '00000000-0000-0000-0000-000000000000',
      regions: ['westeurope'],
      registry: { repository: 'myregistry.azurecr.io/apps' },
    },
  },
  cloud_c_ecs_fargate: {
    fields:
      'Access keys, the cluster, its network, the task execution role and the load balancer listener deployments get host rules on. Optional: sessionToken, roleArn and externalId (a role to assume), assignPublicIp, registry.',
    template: {
      accessKeyId: 'AKIA…',
      secretAccessKey: '…',
      roleArn: 'arn:aws:iam::123456789012:role/slipway',
      cluster: 'apps',
      subnets: ['subnet-0123456789abcdef0'],
      securityGroups: ['sg-0123456789abcdef0'],
      executionRoleArn: 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole',
      assignPublicIp: false,
      loadBalancer: {
        listenerArn: 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:listener/app/apps/…',
        vpcId: 'vpc-0123456789abcdef0',
        hostSuffix: 'apps.example.com',
        scheme: 'https',
      },
      regions: ['eu-west-1'],
      registry: { repository: '123456789012.dkr.ecr.eu-west-1.amazonaws.com/apps' },
    },
  },
};

/** The organisation's clouds: which it may deploy to, as whom, where; credentials go in and never come out. */
export default function CloudProvidersPage() {
  const can = useCan();
  const manage = can('organization.manage');
  const availability = useApi<{ providers: Availability[] }>(AVAILABILITY);
  const saved = useApi<CredentialsSummary[]>(LIST);
  return (
    <Page title="Cloud providers">
      <p className="muted">
        A deployment can run in the organisation’s own cloud account once its credentials are saved here. They are tried
        with a read-only call first and saved only if the cloud accepts them; they are never shown again.
      </p>
      {!manage && <p className="muted">Only owners and admins set or remove a cloud’s credentials.</p>}
      {(availability.isPending || saved.isPending) && <Loading what="Loading the clouds" />}
      <ErrorNote error={availability.error} />
      <ErrorNote error={saved.error} />
      {!availability.isPending &&
        !saved.isPending &&
        CLOUDS.map((id) => (
          <CloudCard
            key={id}
            id={id}
            availability={availability.data?.providers.find((p) => p.id === id)}
            credentials={saved.data?.find((s) => s.provider === id)}
            manage={manage}
          />
        ))}
    </Page>
  );
}

function CloudCard({
  id,
  availability,
  credentials,
  manage,
}: {
  id: CloudId;
  availability: Availability | undefined;
  credentials: CredentialsSummary | undefined;
  manage: boolean;
}) {
  const name = availability?.name ?? id;
  const remove = useChange<void>('DELETE', credentialsPath(id), { invalidates: [LIST, AVAILABILITY] });
  const [savedNote, setSavedNote] = useState<string>();
  return (
    <Section
      title={name}
      actions={
        manage && (
          <>
            <SetCredentials
              id={id}
              name={name}
              replacing={!!credentials}
              onSaving={() => setSavedNote(undefined)}
              onSaved={(s) =>
                setSavedNote(
                  `Saved: ${name} signs in as ${s.identity}, in ${s.regions.join(', ')}. It is not shown again.`,
                )
              }
            />
            {credentials && (
              <TypeToConfirm
                label={`Remove credentials of ${name}`}
                name={id}
                what="New deploys can no longer name this cloud. Refused while deployments run on it: destroy them first."
                onConfirm={() => remove.mutate()}
                busy={remove.isPending}
                error={remove.error}
              />
            )}
          </>
        )
      }
    >
      <Facts
        items={[
          ['Provider', <code key="id">{id}</code>],
          [
            'State',
            availability ? (
              <span key="s" className={`badge badge-${availability.available ? 'ok' : 'idle'}`}>
                {availability.available ? 'available' : 'not available'}
              </span>
            ) : (
              <span key="s" className="muted">
                unknown
              </span>
            ),
          ],
          ...(availability?.reason ? [['Why not', availability.reason] as [string, string]] : []),
          ['Signs in as', credentials ? <code key="i">{credentials.identity}</code> : 'no credentials saved'],
          ['Regions', credentials?.regions.join(', ') || '—'],
          ['Registry', credentials?.registry ? <code key="r">{credentials.registry}</code> : '—'],
          ['Verified', <Time key="v" iso={credentials?.verifiedAt} />],
          [
            'Last changed',
            credentials ? (
              <span key="u">
                <Time iso={credentials.updatedAt} /> by <code>{credentials.updatedBy}</code>
              </span>
            ) : (
              '—'
            ),
          ],
        ]}
      />
      {savedNote && <p role="status">{savedNote}</p>}
    </Section>
  );
}

/** The credentials as the textarea holds them, or what is wrong with the text before anything is sent. */
function parseCredentials(text: string): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return {
      ok: false,
      message: `The credentials are not valid JSON (${(err as Error).message}). Paste one JSON object, as in the template; nothing was sent.`,
    };
  }
}

function SetCredentials({
  id,
  name,
  replacing,
  onSaving,
  onSaved,
}: {
  id: CloudId;
  name: string;
  replacing: boolean;
  onSaving: () => void;
  onSaved: (s: CredentialsSummary) => void;
}) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState('');
  const [invalid, setInvalid] = useState<string>();
  const put = useChange<unknown, CredentialsSummary>('PUT', credentialsPath(id), {
    invalidates: [LIST, AVAILABILITY],
    onSuccess: (s) => {
      // The secret leaves the page with the dialog.
      setText('');
      setOpen(false);
      onSaved(s);
    },
  });
  const { fields, template } = TEMPLATES[id];
  const label = replacing ? `Replace credentials of ${name}` : `Set credentials of ${name}`;
  function close(o: boolean) {
    setOpen(o);
    if (!o) {
      setText('');
      setInvalid(undefined);
      put.reset();
    }
  }
  function submit(e: FormEvent) {
    e.preventDefault();
    put.reset();
    const parsed = parseCredentials(text);
    setInvalid(parsed.ok ? undefined : parsed.message);
    if (!parsed.ok) return;
    onSaving();
    put.mutate(parsed.value);
  }
  return (
    <>
      <Button variant={replacing ? 'plain' : 'primary'} aria-label={label} onClick={() => setOpen(true)}>
        {replacing ? 'Replace credentials' : 'Set credentials'}
      </Button>
      <Dialog
        open={open}
        onOpenChange={close}
        title={label}
        description={`Tried with a read-only call to ${name} before they are saved${replacing ? ' in place of the ones now in use' : ''}; never shown again.`}
      >
        <form onSubmit={submit}>
          <TextArea
            label="Credentials (JSON)"
            required
            rows={10}
            autoComplete="off"
            spellCheck={false}
            value={text}
            onChange={(e) => setText(e.target.value)}
            hint={fields}
          />
          <details>
            <summary>Template for {id}</summary>
            {/* Wrapped and bounded so the dialog stays on screen; a region, so its scroll is reachable by keyboard. */}
            <pre
              className="mono"
              tabIndex={0}
              role="region"
              aria-label={`Template for ${id}`}
              style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all', maxHeight: '14em', overflow: 'auto' }}
            >
              {JSON.stringify(template, null, 2)}
            </pre>
            <Button onClick={() => setText(JSON.stringify(template, null, 2))}>Start from the template</Button>
          </details>
          <ErrorNote error={invalid ?? put.error} />
          <div className="form-actions">
            <Button onClick={() => close(false)}>Cancel</Button>
            <Button type="submit" variant="primary" busy={put.isPending}>
              {put.isPending ? 'Trying them…' : 'Try and save'}
            </Button>
          </div>
        </form>
      </Dialog>
    </>
  );
}
