import { type FormEvent, Suspense, useState } from 'react';
import { Navigate, NavLink, Route, Routes } from 'react-router';

import { useBudget } from './api/hooks';
import { useMe, useSession } from './api/session';
import { PAGES } from './pages/registry';
import { Button, ErrorNote, Loading, TextField } from './ui';

export function App() {
  const { state } = useSession();
  if (state.phase === 'loading') return <Loading what="Opening the console" />;
  if (state.phase === 'signed-out') return <SignIn reason={state.reason} />;
  return <Shell />;
}

function SignIn({ reason }: { reason?: string }) {
  const { signIn } = useSession();
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(token);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <main id="main" className="sign-in">
      <h1>Sign in to Slipway</h1>
      {reason && <p role="status">{reason}</p>}
      <form onSubmit={(e) => void submit(e)} className="card">
        <TextField
          label="Access token"
          name="token"
          type="password"
          autoComplete="off"
          required
          value={token}
          onChange={(e) => setToken(e.target.value)}
          hint={
            <>
              A token <code>svc_…</code>: from Tokens in the console, <code>slipway tokens create</code>, or{' '}
              <code>npm run cli -- admin bootstrap</code> for the first one. It is exchanged for a session cookie and
              not kept by the page.
            </>
          }
        />
        <ErrorNote error={error} />
        <Button type="submit" variant="primary" busy={busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}

function Budget() {
  const budget = useBudget();
  if (!budget) return null;
  return (
    <span className="muted budget" title="The platform API allows this many requests per 15 minutes per client">
      {budget.remaining}/{budget.limit} requests left
    </span>
  );
}

function Shell() {
  const me = useMe();
  const { signOut, can } = useSession();
  const pages = PAGES.filter((p) => !p.permission || can(p.permission));
  const groups = [...new Set(pages.map((p) => p.group))];
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Slipway</span>
        <span className="org">{me.org.name}</span>
        <span className="spacer" />
        <Budget />
        <span className="who">
          {me.user.email} · {me.user.role}
        </span>
        <Button onClick={() => void signOut()}>Sign out</Button>
      </header>
      <div className="layout">
        <nav aria-label="Console">
          {groups.map((g) => (
            <div key={g} className="nav-group">
              <h2 className="nav-title">{g}</h2>
              <ul>
                {pages
                  .filter((p) => p.group === g)
                  .map((p) => (
                    <li key={p.path}>
                      <NavLink to={`/${p.path}`}>{p.label}</NavLink>
                    </li>
                  ))}
              </ul>
            </div>
          ))}
        </nav>
        <main id="main" tabIndex={-1}>
          <Suspense fallback={<Loading />}>
            <Routes>
              <Route path="/" element={<Navigate to={`/${pages[0]?.path ?? 'tokens'}`} replace />} />
              {PAGES.map((p) => (
                <Route key={p.path} path={`/${p.path}/*`} element={<p.component />} />
              ))}
              <Route path="*" element={<NotFound />} />
            </Routes>
          </Suspense>
        </main>
      </div>
    </>
  );
}

function NotFound() {
  return (
    <section className="page">
      <h1>Not found</h1>
      <p>No page here; choose one from the navigation.</p>
    </section>
  );
}
