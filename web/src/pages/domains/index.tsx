import { useState } from 'react';
import { Link, Route, Routes, useNavigate, useParams } from 'react-router';

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
  Section,
  SelectField,
  StatusBadge,
  TextField,
  Time,
  TypeToConfirm,
} from '../../ui';

/** The shapes of api/features/domains/schemas.ts, as the console reads them. */
interface DnsRecord {
  type: 'TXT' | 'CNAME' | 'A' | 'AAAA';
  name: string;
  value: string;
  purpose: 'ownership' | 'routing';
}
interface DomainCheck {
  at: string;
  txt: 'found' | 'missing' | 'other' | 'error';
  routing: 'cname' | 'address' | 'missing' | 'elsewhere' | 'error';
  message: string;
}
interface Domain {
  id: string;
  hostname: string;
  deploymentId: string;
  projectId: string | null;
  status: 'pending' | 'verified' | 'failed';
  routed: boolean;
  url: string;
  token: string;
  dnsRecords: DnsRecord[];
  lastCheck: DomainCheck | null;
  verifiedAt: string | null;
  createdAt: string;
}
interface DomainList {
  domains: Domain[];
  total: number;
}
interface DeploymentList {
  deployments: Array<{ id: string; name?: string; status: string }>;
}

export default function DomainsPage() {
  return (
    <Routes>
      <Route index element={<DomainListView />} />
      <Route path=":id" element={<DomainView />} />
    </Routes>
  );
}

function DomainListView() {
  const can = useCan();
  const list = useApi<DomainList>(`/platform/domains${qs({ limit: 100 })}`);
  return (
    <Page title="Domains">
      {can('domain.manage') && <AddDomain />}
      <Section title={list.data ? `Custom domains (${list.data.total})` : 'Custom domains'}>
        {list.isPending && <Loading what="Loading domains" />}
        <ErrorNote error={list.error} />
        <DataTable
          caption="Custom domains"
          rows={list.data?.domains}
          rowKey={(d) => d.id}
          empty="No custom domain yet: add one to a deployment, then create the DNS records it lists."
          columns={[
            { header: 'Host', cell: (d) => <Link to={d.id}>{d.hostname}</Link> },
            { header: 'State', cell: (d) => <StatusBadge status={d.status} /> },
            { header: 'Served', cell: (d) => (d.routed ? 'yes, over HTTPS' : 'not yet') },
            { header: 'Deployment', cell: (d) => <code>{d.deploymentId}</code> },
            { header: 'Added', cell: (d) => <Time iso={d.createdAt} /> },
          ]}
        />
      </Section>
    </Page>
  );
}

function AddDomain() {
  const can = useCan();
  const navigate = useNavigate();
  const deployments = useApi<DeploymentList>(`/platform/deployments${qs({ limit: 100 })}`, {
    enabled: can('deployment.read'),
  });
  const choices = deployments.data?.deployments ?? [];
  const [hostname, setHostname] = useState('');
  const [deploymentId, setDeploymentId] = useState('');
  const chosen = deploymentId || choices[0]?.id || '';
  const add = useChange<void, Domain>('POST', '/platform/domains', {
    invalidates: ['/platform/domains'],
    body: () => ({ hostname: hostname.trim(), deploymentId: chosen.trim() }),
    onSuccess: (d) => navigate(d.id),
  });
  return (
    <Section title="Add a domain">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          add.mutate();
        }}
      >
        <TextField
          label="Host name"
          required
          placeholder="www.example.com"
          value={hostname}
          onChange={(e) => setHostname(e.target.value)}
          hint="A host you control; no wildcards, IP addresses or names under this service's own domain."
        />
        {choices.length > 0 ? (
          <SelectField
            label="Deployment"
            value={chosen}
            onChange={(e) => setDeploymentId(e.target.value)}
            options={choices.map((d) => ({ value: d.id, label: `${d.name ?? d.id} (${d.status})` }))}
          />
        ) : (
          <TextField
            label="Deployment ID"
            value={deploymentId}
            onChange={(e) => setDeploymentId(e.target.value)}
            hint="The deployment the domain serves; deploy one first if there is none."
          />
        )}
        <ErrorNote error={add.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={add.isPending}>
            Add domain
          </Button>
        </div>
      </form>
    </Section>
  );
}

function CopyButton({ value, what }: { value: string; what: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      aria-label={`Copy ${what}`}
      onClick={() => {
        void navigator.clipboard?.writeText(value).then(() => setCopied(true));
      }}
    >
      {copied ? 'Copied' : 'Copy'}
    </Button>
  );
}

const TXT_WORDS: Record<DomainCheck['txt'], string> = {
  found: 'found, holding the token',
  missing: 'missing',
  other: 'present, but holding another value',
  error: 'DNS did not answer',
};
const ROUTING_WORDS: Record<DomainCheck['routing'], string> = {
  cname: 'CNAME to the deployment',
  address: "A/AAAA to the edge router's addresses",
  missing: 'missing',
  elsewhere: 'pointing elsewhere',
  error: 'DNS did not answer',
};

function DomainView() {
  const { id = '' } = useParams();
  const can = useCan();
  const navigate = useNavigate();
  const path = `/platform/domains/${id}`;
  const domain = useApi<Domain>(path);
  const verify = useChange<void, Domain>('POST', `${path}/verify`, { invalidates: ['/platform/domains'] });
  const remove = useChange('DELETE', path, {
    invalidates: ['/platform/domains'],
    onSuccess: () => navigate('..'),
  });
  // The verify answer is the domain after the check: shown at once, before the list's reread lands.
  const d = verify.data ?? domain.data;
  return (
    <Page title={d ? `Domain ${d.hostname}` : 'Domain'} actions={<Link to="..">All domains</Link>}>
      {domain.isPending && <Loading what="Loading the domain" />}
      <ErrorNote error={domain.error} />
      {d && (
        <>
          <Section title="State">
            <Facts
              items={[
                ['State', <StatusBadge key="s" status={d.status} />],
                ['Served over HTTPS', d.routed ? <a href={d.url}>{d.url}</a> : 'not yet (only once verified)'],
                ['Deployment', <code key="dep">{d.deploymentId}</code>],
                ['Verified', <Time key="v" iso={d.verifiedAt} />],
                ['Added', <Time key="a" iso={d.createdAt} />],
              ]}
            />
          </Section>
          <Section title="DNS records to create">
            <p>
              The TXT record proves the domain is yours (required); the routing records send its traffic here. Create
              them at your DNS provider, then verify.
            </p>
            <DataTable
              caption={`DNS records for ${d.hostname}`}
              rows={d.dnsRecords}
              rowKey={(r) => `${r.type} ${r.name} ${r.value}`}
              columns={[
                { header: 'Purpose', cell: (r) => r.purpose },
                { header: 'Type', cell: (r) => r.type },
                {
                  header: 'Name',
                  cell: (r) => (
                    <span className="domains-copy">
                      <code>{r.name}</code> <CopyButton value={r.name} what={`${r.type} name ${r.name}`} />
                    </span>
                  ),
                },
                {
                  header: 'Value',
                  cell: (r) => (
                    <span className="domains-copy">
                      <code>{r.value}</code> <CopyButton value={r.value} what={`${r.type} value for ${r.name}`} />
                    </span>
                  ),
                },
              ]}
            />
          </Section>
          <Section title="Verification">
            {d.lastCheck ? (
              <Facts
                items={[
                  ['Checked', <Time key="t" iso={d.lastCheck.at} />],
                  ['Ownership TXT', TXT_WORDS[d.lastCheck.txt]],
                  ['Routing', ROUTING_WORDS[d.lastCheck.routing]],
                  ['What to do', d.lastCheck.message],
                ]}
              />
            ) : (
              <p>Not checked yet.</p>
            )}
            {can('domain.manage') && (
              <>
                <p className="muted">
                  The domain is also checked in the background for 72 hours. Checking now is limited to 3 times per 5
                  minutes.
                </p>
                <ErrorNote error={verify.error} />
                {verify.isSuccess && <p role="status">Checked: {d.status}.</p>}
                <div className="form-actions">
                  <Button variant="primary" busy={verify.isPending} onClick={() => verify.mutate()}>
                    Verify now
                  </Button>
                </div>
              </>
            )}
          </Section>
          {can('domain.manage') && (
            <Section title="Remove">
              <p>Its route leaves the edge router and the host may be claimed again.</p>
              <TypeToConfirm
                label="Remove domain"
                name={d.hostname}
                what={`${d.hostname} stops being served by this deployment.`}
                onConfirm={() => remove.mutate()}
                busy={remove.isPending}
                error={remove.error}
              />
            </Section>
          )}
        </>
      )}
    </Page>
  );
}
