import { useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';

import { qs } from '../../api/client';
import { useApi, useChange } from '../../api/hooks';
import {
  Button,
  DataTable,
  Dialog,
  ErrorNote,
  Facts,
  Loading,
  Page,
  SecretOnce,
  Section,
  SelectField,
  StatusBadge,
  TextField,
  Time,
} from '../../ui';

// Shapes of the sales routes (api/features/sales/schemas.ts).
interface WebhookSettings {
  url: string | null;
  secret: string | null;
  previousSecretsValidUntil: string[];
}
interface DeliverySummary {
  eventId: string;
  type: string;
  status: string;
  createdAt: string;
  attemptCount: number;
  lastAttemptAt: string | null;
  lastResponseStatus: number | null;
}
interface Attempt {
  number: number;
  key: string;
  trigger: string;
  at: string;
  durationMs: number;
  responseStatus: number | null;
  errorClass: string | null;
  error: string | null;
  nextAttemptAt: string | null;
}
interface Delivery extends DeliverySummary {
  attempts: Attempt[];
}
interface Product {
  id: string;
  name: string;
  billingType: 'ONE_TIME' | 'SUBSCRIPTION';
  price: number;
  currency: string;
  interval: 'month' | 'year' | null;
}
interface Sale {
  id: string;
  productName: string;
  buyer: { email: string; name: string };
  quantity: number;
  amount: number;
  currency: string;
  createdAt: string;
  refundedAt: string | null;
}

const DELIVERIES = '/platform/sales/deliveries';
const PAGE_SIZE = 20;

export default function SellerPage() {
  return (
    <Page title="Seller">
      <p className="muted">
        Slipway signs and sends an event to your endpoint when a buyer pays, is refunded or a subscription changes; your
        site asks the entitlement lookup what a buyer holds, with the API key.
      </p>
      <WebhookSection />
      <ApiKeySection />
      <DeliveriesSection />
      <ProductsSection />
      <SalesSection />
    </Page>
  );
}

function WebhookSection() {
  const settings = useApi<WebhookSettings>('/platform/sales/webhook');
  const [url, setUrl] = useState('');
  const [rotateNow, setRotateNow] = useState(false);
  const [secret, setSecret] = useState<string>();
  const save = useChange<{ url: string; rotateImmediately: boolean }, { url: string; secret: string }>(
    'PUT',
    '/platform/sales/webhook',
    { invalidates: ['/platform/sales/webhook'], onSuccess: (r) => setSecret(r.secret) },
  );
  const current = settings.data?.url;
  useEffect(() => {
    if (current) setUrl((u) => u || current);
  }, [current]);
  function submit(e: FormEvent) {
    e.preventDefault();
    setSecret(undefined);
    save.mutate({ url: url.trim(), rotateImmediately: rotateNow });
  }
  return (
    <Section title="Webhook endpoint">
      {settings.isLoading && <Loading />}
      <ErrorNote error={settings.error} />
      {settings.data?.url && (
        <Facts
          items={[
            ['Endpoint', <code key="u">{settings.data.url}</code>],
            ['Signing secret', <code key="s">{settings.data.secret}</code>],
            [
              'Previous secrets still signing until',
              settings.data.previousSecretsValidUntil.length ? (
                settings.data.previousSecretsValidUntil.map((t) => <Time key={t} iso={t} />)
              ) : (
                <span className="muted">none</span>
              ),
            ],
          ]}
        />
      )}
      <form onSubmit={submit}>
        <TextField
          label="Webhook URL"
          type="url"
          required
          placeholder="https://shop.example.com/hooks/slipway"
          value={url}
          onChange={(e) => setUrl(e.target.value)}
          hint="Every save, even of the same URL, generates a new signing secret, shown once. This is how the secret is rotated: the previous one keeps signing beside it for 24 hours so your receiver can switch over, unless you stop it at once below."
        />
        <div className="seller-check">
          <input
            id="seller-rotate-now"
            type="checkbox"
            checked={rotateNow}
            onChange={(e) => setRotateNow(e.target.checked)}
          />
          <label htmlFor="seller-rotate-now">Stop signing with the previous secret at once</label>
        </div>
        <ErrorNote error={save.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={save.isPending}>
            {current ? 'Save and rotate the signing secret' : 'Save webhook URL'}
          </Button>
        </div>
      </form>
      {secret && <SecretOnce label="Signing secret" value={secret} />}
    </Section>
  );
}

function ApiKeySection() {
  const [key, setKey] = useState<string>();
  const [confirm, setConfirm] = useState(false);
  const [confirmRevoke, setConfirmRevoke] = useState(false);
  const [revoked, setRevoked] = useState(false);
  const create = useChange<void, { apiKey: string }>('POST', '/platform/sales/api-keys', {
    onSuccess: (r) => {
      setKey(r.apiKey);
      setRevoked(false);
      setConfirm(false);
    },
  });
  const revoke = useChange<void, void>('DELETE', '/platform/sales/api-keys', {
    onSuccess: () => {
      setKey(undefined);
      setRevoked(true);
      setConfirmRevoke(false);
    },
  });
  return (
    <Section title="API key">
      <p>
        Your site sends it as <code>Authorization: Bearer &lt;API key&gt;</code> to the entitlement lookup (
        <code>GET /api/v1/entitlements?email=…</code>). It is shown once, when created. Creating a new key rotates it:
        the previous key is refused from that moment on.
      </p>
      <div className="form-actions">
        <Button variant="primary" onClick={() => setConfirm(true)}>
          Create or rotate API key
        </Button>
        <Button variant="danger" onClick={() => setConfirmRevoke(true)}>
          Revoke API key
        </Button>
      </div>
      {revoked && (
        <p role="status">The API key is revoked: the entitlement lookup refuses every key until you create one.</p>
      )}
      <Dialog
        open={confirmRevoke}
        onOpenChange={setConfirmRevoke}
        title="Revoke the API key?"
        description="The entitlement lookup refuses it at once, and no key works until you create a new one."
      >
        <ErrorNote error={revoke.error} />
        <div className="form-actions">
          <Button onClick={() => setConfirmRevoke(false)}>Cancel</Button>
          <Button variant="danger" busy={revoke.isPending} onClick={() => revoke.mutate()}>
            Revoke key
          </Button>
        </div>
      </Dialog>
      <Dialog
        open={confirm}
        onOpenChange={setConfirm}
        title="Create a new API key?"
        description="Any previous key stops working at once: update your site with the new key straight away."
      >
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button onClick={() => setConfirm(false)}>Cancel</Button>
          <Button variant="danger" busy={create.isPending} onClick={() => create.mutate()}>
            Create new key
          </Button>
        </div>
      </Dialog>
      {key && <SecretOnce label="API key" value={key} />}
    </Section>
  );
}

/** Refetch delays after an attempt the api left queued (no worker took it in time): a few, then the Refresh button. */
const BACKOFF_MS = [2000, 5000, 12000];

function DeliveriesSection() {
  const client = useQueryClient();
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const path = DELIVERIES + qs({ status, limit: PAGE_SIZE, offset });
  const list = useApi<{ deliveries: DeliverySummary[]; total: number }>(path);
  const [open, setOpen] = useState<string>();
  const [note, setNote] = useState<string>();
  const timers = useRef<number[]>([]);
  useEffect(() => () => timers.current.forEach((t) => window.clearTimeout(t)), []);
  const refresh = () => void client.invalidateQueries({ queryKey: [path] });
  function followQueued() {
    timers.current.forEach((t) => window.clearTimeout(t));
    timers.current = BACKOFF_MS.map((ms) =>
      window.setTimeout(
        () =>
          void client.invalidateQueries({
            predicate: (q) => typeof q.queryKey[0] === 'string' && q.queryKey[0].startsWith(DELIVERIES),
          }),
        ms,
      ),
    );
  }
  const test = useChange<void, { eventId: string; outcome: string; message?: string }>(
    'POST',
    '/platform/sales/webhook/test',
    {
      invalidates: [DELIVERIES],
      onSuccess: (r) => {
        setNote(r.message ?? `Test event ${r.eventId}: ${r.outcome}.`);
        if (r.outcome === 'queued') followQueued();
      },
    },
  );
  return (
    <Section
      title="Deliveries"
      actions={
        <>
          <Button onClick={refresh}>Refresh</Button>
          <Button variant="primary" busy={test.isPending} onClick={() => test.mutate()}>
            Send test event
          </Button>
        </>
      }
    >
      <p className="muted">
        Every event sent to your endpoint, newest first. A failed attempt is retried 3 times, then once a day for 24
        hours; Resend sends the same event (same ID and body) once more now.
      </p>
      <ErrorNote error={test.error} />
      {note && <p role="status">{note}</p>}
      <SelectField
        label="Status"
        value={status}
        onChange={(e) => {
          setStatus(e.target.value);
          setOffset(0);
        }}
        options={[
          { value: '', label: 'All' },
          { value: 'pending', label: 'Pending' },
          { value: 'delivered', label: 'Delivered' },
          { value: 'failed', label: 'Failed' },
        ]}
      />
      {list.isLoading && <Loading />}
      <ErrorNote error={list.error} />
      <DataTable
        caption="Webhook deliveries"
        rows={list.data?.deliveries}
        rowKey={(d) => d.eventId}
        empty="No events yet: save a webhook URL, then press Send test event."
        columns={[
          { header: 'Event', cell: (d) => <code>{d.eventId}</code> },
          { header: 'Type', cell: (d) => d.type },
          { header: 'Status', cell: (d) => <StatusBadge status={d.status} /> },
          { header: 'Created', cell: (d) => <Time iso={d.createdAt} /> },
          { header: 'Attempts', cell: (d) => d.attemptCount },
          { header: 'Last attempt', cell: (d) => <Time iso={d.lastAttemptAt} /> },
          {
            header: 'Response code',
            cell: (d) => (d.lastResponseStatus ?? (d.attemptCount ? 'no answer' : '—')).toString(),
          },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (d) => (
              <div className="seller-row-actions">
                <Button onClick={() => setOpen(d.eventId)} aria-label={`Attempts of ${d.eventId}`}>
                  Attempts
                </Button>
                <ResendButton eventId={d.eventId} onQueued={followQueued} />
              </div>
            ),
          },
        ]}
      />
      <Pager total={list.data?.total} offset={offset} setOffset={setOffset} what="deliveries" />
      {open && <AttemptsDialog eventId={open} onClose={() => setOpen(undefined)} />}
    </Section>
  );
}

function ResendButton({ eventId, onQueued }: { eventId: string; onQueued: () => void }) {
  const resend = useChange<void, { outcome: string }>('POST', `${DELIVERIES}/${eventId}/resend`, {
    invalidates: [DELIVERIES],
    onSuccess: (r) => {
      if (r.outcome === 'queued') onQueued();
    },
  });
  return (
    <>
      <Button busy={resend.isPending} onClick={() => resend.mutate()} aria-label={`Resend ${eventId}`}>
        Resend
      </Button>
      <ErrorNote error={resend.error} />
    </>
  );
}

function AttemptsDialog({ eventId, onClose }: { eventId: string; onClose: () => void }) {
  const d = useApi<Delivery>(`${DELIVERIES}/${eventId}`);
  return (
    <Dialog open onOpenChange={(o) => !o && onClose()} title={`Attempts of event ${eventId}`}>
      {d.isLoading && <Loading />}
      <ErrorNote error={d.error} />
      <DataTable
        caption={`Attempts of event ${eventId}`}
        rows={d.data?.attempts}
        rowKey={(a) => a.key}
        empty="No attempt yet: it is sent when a worker takes it."
        columns={[
          { header: '#', cell: (a) => a.number },
          { header: 'Trigger', cell: (a) => a.trigger },
          { header: 'Time', cell: (a) => <Time iso={a.at} /> },
          { header: 'Response code', cell: (a) => a.responseStatus ?? 'no answer' },
          { header: 'Error', cell: (a) => a.error ?? a.errorClass ?? '—' },
          { header: 'Duration', cell: (a) => `${Math.round(a.durationMs)} ms` },
          { header: 'Next attempt', cell: (a) => <Time iso={a.nextAttemptAt} /> },
        ]}
      />
      <div className="form-actions">
        <Button onClick={onClose}>Close</Button>
      </div>
    </Dialog>
  );
}

function Pager({
  total,
  offset,
  setOffset,
  what,
}: {
  total: number | undefined;
  offset: number;
  setOffset: (n: number) => void;
  what: string;
}) {
  if (!total || total <= PAGE_SIZE) return null;
  return (
    <nav className="form-actions" aria-label={`Pages of ${what}`}>
      <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE_SIZE))}>
        Newer
      </Button>
      <span className="muted">
        {offset + 1}–{Math.min(offset + PAGE_SIZE, total)} of {total}
      </span>
      <Button disabled={offset + PAGE_SIZE >= total} onClick={() => setOffset(offset + PAGE_SIZE)}>
        Older
      </Button>
    </nav>
  );
}

function ProductsSection() {
  const list = useApi<{ products: Product[] }>('/platform/products');
  const [name, setName] = useState('');
  const [billingType, setBillingType] = useState<Product['billingType']>('ONE_TIME');
  const [price, setPrice] = useState('');
  const [currency, setCurrency] = useState('USD');
  const [interval, setInterval] = useState<'month' | 'year'>('month');
  const create = useChange<unknown, Product>('POST', '/platform/products', {
    invalidates: ['/platform/products'],
    onSuccess: () => {
      setName('');
      setPrice('');
    },
  });
  function submit(e: FormEvent) {
    e.preventDefault();
    create.mutate({
      name: name.trim(),
      billingType,
      price: Number(price),
      currency: currency.trim(),
      ...(billingType === 'SUBSCRIPTION' ? { interval } : {}),
    });
  }
  return (
    <Section title="Products">
      {list.isLoading && <Loading />}
      <ErrorNote error={list.error} />
      <DataTable
        caption="Products"
        rows={list.data?.products}
        rowKey={(p) => p.id}
        empty="No products yet: add one below, then record its sales from your checkout (POST /platform/sales)."
        columns={[
          { header: 'Name', cell: (p) => p.name },
          { header: 'Billing', cell: (p) => (p.billingType === 'ONE_TIME' ? 'One time' : `Every ${p.interval}`) },
          { header: 'Price', cell: (p) => `${p.price} ${p.currency}` },
          { header: 'ID', cell: (p) => <code>{p.id}</code> },
        ]}
      />
      <form onSubmit={submit} className="seller-form">
        <TextField label="Product name" required value={name} onChange={(e) => setName(e.target.value)} />
        <SelectField
          label="Billing"
          value={billingType}
          onChange={(e) => setBillingType(e.target.value as Product['billingType'])}
          options={[
            { value: 'ONE_TIME', label: 'One time' },
            { value: 'SUBSCRIPTION', label: 'Subscription' },
          ]}
        />
        {billingType === 'SUBSCRIPTION' && (
          <SelectField
            label="Interval"
            value={interval}
            onChange={(e) => setInterval(e.target.value as 'month' | 'year')}
            options={[
              { value: 'month', label: 'Monthly' },
              { value: 'year', label: 'Yearly' },
            ]}
          />
        )}
        <TextField
          label="Price"
          type="number"
          min="0"
          step="0.01"
          required
          value={price}
          onChange={(e) => setPrice(e.target.value)}
        />
        <TextField
          label="Currency"
          required
          maxLength={3}
          value={currency}
          onChange={(e) => setCurrency(e.target.value)}
          hint="A three-letter code such as USD or EUR."
        />
        <ErrorNote error={create.error} />
        <div className="form-actions">
          <Button type="submit" variant="primary" busy={create.isPending}>
            Add product
          </Button>
        </div>
      </form>
    </Section>
  );
}

function SalesSection() {
  const [offset, setOffset] = useState(0);
  const list = useApi<{ sales: Sale[]; total: number }>('/platform/sales' + qs({ limit: PAGE_SIZE, offset }));
  return (
    <Section title="Sales">
      {list.isLoading && <Loading />}
      <ErrorNote error={list.error} />
      <DataTable
        caption="Sales"
        rows={list.data?.sales}
        rowKey={(s) => s.id}
        empty="No sales yet: your checkout records each paid sale with POST /platform/sales."
        columns={[
          { header: 'Time', cell: (s) => <Time iso={s.createdAt} /> },
          { header: 'Product', cell: (s) => s.productName },
          { header: 'Buyer', cell: (s) => `${s.buyer.name} <${s.buyer.email}>` },
          { header: 'Amount', cell: (s) => `${s.amount} ${s.currency}` },
          {
            header: 'Status',
            cell: (s) => <StatusBadge status={s.refundedAt ? 'refunded' : 'paid'} />,
          },
          {
            header: 'Actions',
            hiddenHeader: true,
            cell: (s) => (s.refundedAt ? <Time iso={s.refundedAt} /> : <RefundButton sale={s} />),
          },
        ]}
      />
      <Pager total={list.data?.total} offset={offset} setOffset={setOffset} what="sales" />
    </Section>
  );
}

function RefundButton({ sale }: { sale: Sale }) {
  const [open, setOpen] = useState(false);
  const refund = useChange<void, unknown>('POST', `/platform/sales/${sale.id}/refund`, {
    invalidates: ['/platform/sales'],
    onSuccess: () => setOpen(false),
  });
  return (
    <>
      <Button variant="danger" onClick={() => setOpen(true)} aria-label={`Refund sale to ${sale.buyer.email}`}>
        Refund
      </Button>
      <Dialog
        open={open}
        onOpenChange={setOpen}
        title="Refund this sale?"
        description={`Marks the sale of ${sale.productName} to ${sale.buyer.email} (${sale.amount} ${sale.currency}) refunded and sends sale.refunded to your endpoint, so your site revokes access. Money is returned by your payment provider, not here.`}
      >
        <ErrorNote error={refund.error} />
        <div className="form-actions">
          <Button onClick={() => setOpen(false)}>Cancel</Button>
          <Button variant="danger" busy={refund.isPending} onClick={() => refund.mutate()}>
            Refund
          </Button>
        </div>
      </Dialog>
    </>
  );
}
