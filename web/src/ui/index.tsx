/**
 * The console's small component set: native elements where they are accessible as they are (buttons, forms, tables,
 * details), Radix primitives where focus and keyboard handling are not (dialogs, tabs). Every field has a label,
 * every error is announced, every status has text beside its colour.
 */
import * as RDialog from '@radix-ui/react-dialog';
import * as RTabs from '@radix-ui/react-tabs';
import {
  type ButtonHTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useEffect,
  useId,
  useState,
} from 'react';

import { ApiError } from '../api/client';

export function Page({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  useEffect(() => {
    document.title = `${title} · Slipway`;
  }, [title]);
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-head">
        <h1 id="page-title">{title}</h1>
        {actions && <div className="page-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function Section({ title, actions, children }: { title: string; actions?: ReactNode; children: ReactNode }) {
  const id = useId();
  return (
    <section className="card" aria-labelledby={id}>
      <header className="card-head">
        <h2 id={id}>{title}</h2>
        {actions && <div className="page-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

type Variant = 'primary' | 'danger' | 'plain';
export function Button({
  variant = 'plain',
  busy,
  children,
  ...rest
}: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant; busy?: boolean }) {
  return (
    <button
      type="button"
      className={`btn btn-${variant}`}
      aria-busy={busy || undefined}
      disabled={busy || rest.disabled}
      {...rest}
    >
      {children}
    </button>
  );
}

/** A labelled control: the label, the control (given the id), a hint and an error both tied to it. */
export function Field({
  label,
  hint,
  error,
  children,
}: {
  label: string;
  hint?: ReactNode;
  error?: string;
  children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ReactNode;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children({ id, 'aria-describedby': describedBy, 'aria-invalid': error ? true : undefined })}
      {hint && (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      )}
      {error && (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  );
}

export function TextField({
  label,
  hint,
  error,
  ...input
}: InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: ReactNode; error?: string }) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => <input {...p} {...input} />}
    </Field>
  );
}

export function TextArea({
  label,
  hint,
  error,
  ...input
}: TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; hint?: ReactNode; error?: string }) {
  return (
    <Field label={label} hint={hint} error={error}>
      {(p) => <textarea {...p} {...input} />}
    </Field>
  );
}

export function SelectField({
  label,
  hint,
  options,
  ...select
}: SelectHTMLAttributes<HTMLSelectElement> & {
  label: string;
  hint?: ReactNode;
  options: Array<{ value: string; label: string }>;
}) {
  return (
    <Field label={label} hint={hint}>
      {(p) => (
        <select {...p} {...select}>
          {options.map((o) => (
            <option key={o.value} value={o.value}>
              {o.label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/** What the api said was wrong, announced to screen readers; nothing when there is no error. */
export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const retry = error instanceof ApiError && error.retryAfterS ? ` Try again in ${error.retryAfterS} s.` : '';
  return (
    <p role="alert" className="error-note">
      {message}
      {retry}
    </p>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="muted" role="status">
      {what}…
    </p>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** A visually hidden header (an actions column). */
  hiddenHeader?: boolean;
}

/** A table with a caption (for screen readers, visible when `showCaption`) and one row per item. */
export function DataTable<T>({
  caption,
  columns,
  rows,
  rowKey,
  empty,
}: {
  caption: string;
  columns: Column<T>[];
  rows: T[] | undefined;
  rowKey: (row: T) => string;
  empty?: ReactNode;
}) {
  if (rows && rows.length === 0) return <Empty>{empty ?? 'Nothing here yet.'}</Empty>;
  return (
    // Focusable and named: a table wider than its box scrolls, and keyboard users must reach that scroll too.
    <div className="table-wrap" tabIndex={0} role="region" aria-label={caption}>
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.header} scope="col">
                {c.hiddenHeader ? <span className="sr-only">{c.header}</span> : c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {(rows ?? []).map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((c) => (
                <td key={c.header}>{c.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

const TONES: Record<string, 'ok' | 'busy' | 'bad' | 'idle'> = {
  running: 'ok',
  active: 'ok',
  verified: 'ok',
  succeeded: 'ok',
  delivered: 'ok',
  ready: 'ok',
  open: 'busy',
  pending: 'busy',
  queued: 'busy',
  building: 'busy',
  deploying: 'busy',
  starting: 'busy',
  stopping: 'busy',
  destroying: 'busy',
  retrying: 'busy',
  failed: 'bad',
  error: 'bad',
  destroyed: 'idle',
  stopped: 'idle',
  closed: 'idle',
};

/** A status in words, coloured by tone (the words carry it; the colour only helps). */
export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge badge-${TONES[status] ?? 'idle'}`}>{status}</span>;
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>;
  const d = new Date(iso);
  return (
    <time dateTime={iso} title={d.toISOString()}>
      {d.toLocaleString()}
    </time>
  );
}

/** A secret shown once, with a copy button; the page says it will not be shown again. */
export function SecretOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState(false);
  const id = useId();
  return (
    <div className="secret-once" role="region" aria-labelledby={id}>
      <p id={id}>
        <strong>{label}</strong> — shown once: copy it now, it cannot be shown again.
      </p>
      <code data-testid="secret-value">{value}</code>
      <Button
        onClick={() => {
          void navigator.clipboard?.writeText(value).then(() => setCopied(true));
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </Button>
    </div>
  );
}

/** A modal dialog (Radix: focus trapped and restored, Escape closes, labelled by its title). */
export function Dialog({
  open,
  onOpenChange,
  title,
  description,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description?: string;
  children: ReactNode;
}) {
  return (
    <RDialog.Root open={open} onOpenChange={onOpenChange}>
      <RDialog.Portal>
        <RDialog.Overlay className="dialog-overlay" />
        <RDialog.Content className="dialog" aria-describedby={description ? undefined : undefined}>
          <RDialog.Title>{title}</RDialog.Title>
          {description ? (
            <RDialog.Description>{description}</RDialog.Description>
          ) : (
            <RDialog.Description className="sr-only">{title}</RDialog.Description>
          )}
          {children}
        </RDialog.Content>
      </RDialog.Portal>
    </RDialog.Root>
  );
}

/**
 * A destructive action confirmed by typing the resource's name, as the best consoles ask: the button stays disabled
 * until the name matches.
 */
export function TypeToConfirm({
  label,
  name,
  what,
  onConfirm,
  busy,
  error,
}: {
  label: string;
  name: string;
  what: string;
  onConfirm: () => void;
  busy?: boolean;
  error?: unknown;
}) {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  return (
    <>
      <Button variant="danger" onClick={() => setOpen(true)}>
        {label}
      </Button>
      <Dialog open={open} onOpenChange={setOpen} title={`${label}?`} description={what}>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (typed === name) onConfirm();
          }}
        >
          <TextField
            label={`Type ${name} to confirm`}
            value={typed}
            onChange={(e) => setTyped(e.target.value)}
            autoComplete="off"
          />
          <ErrorNote error={error} />
          <div className="form-actions">
            <Button onClick={() => setOpen(false)}>Cancel</Button>
            <Button type="submit" variant="danger" disabled={typed !== name} busy={busy}>
              {label}
            </Button>
          </div>
        </form>
      </Dialog>
    </>
  );
}

export function Tabs({
  tabs,
  defaultTab,
}: {
  tabs: Array<{ id: string; label: string; content: ReactNode }>;
  defaultTab?: string;
}) {
  return (
    <RTabs.Root className="tabs" defaultValue={defaultTab ?? tabs[0]?.id}>
      <RTabs.List className="tab-list" aria-label="Sections">
        {tabs.map((t) => (
          <RTabs.Trigger key={t.id} value={t.id} className="tab">
            {t.label}
          </RTabs.Trigger>
        ))}
      </RTabs.List>
      {tabs.map((t) => (
        <RTabs.Content key={t.id} value={t.id} className="tab-panel">
          {t.content}
        </RTabs.Content>
      ))}
    </RTabs.Root>
  );
}

/** Definition list of a resource's facts. */
export function Facts({ items }: { items: Array<[string, ReactNode]> }) {
  return (
    <dl className="facts">
      {items.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </div>
      ))}
    </dl>
  );
}
