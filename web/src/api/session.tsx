import { useQueryClient } from '@tanstack/react-query';
import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';

import { ApiError, call, get, setCsrfToken, whenSignedOut } from './client';

/** GET /platform/tokens/current: who the session is and what it may do. */
export interface Me {
  id: string;
  name: string;
  scopes: string[];
  expiresAt: string;
  user: { id: string; email: string; role: 'owner' | 'admin' | 'developer' | 'viewer' };
  org: { id: string; name: string; plan: string };
  permissions: string[];
  actsAsProjectAdmin: boolean;
}

interface ConsoleSession {
  id: string;
  csrfToken: string;
  expiresAt: string;
}

type State = { phase: 'loading' } | { phase: 'signed-out'; reason?: string } | { phase: 'signed-in'; me: Me };

interface SessionApi {
  state: State;
  signIn(token: string): Promise<void>;
  signOut(): Promise<void>;
  /** Whether the session's token and role allow a permission across the organisation. */
  can(permission: string): boolean;
}

const Ctx = createContext<SessionApi | undefined>(undefined);

export function SessionProvider({ children }: { children: ReactNode }) {
  const [state, setState] = useState<State>({ phase: 'loading' });
  const client = useQueryClient();

  const load = useCallback(async () => {
    try {
      const session = await get<ConsoleSession>('/platform/session');
      setCsrfToken(session.csrfToken);
      const me = await get<Me>('/platform/tokens/current');
      setState({ phase: 'signed-in', me });
    } catch (err) {
      setCsrfToken(undefined);
      // No session (401), or the page was opened with no cookie at all (400): the sign-in page either way.
      const reason = err instanceof ApiError && err.status >= 500 ? err.message : undefined;
      setState({ phase: 'signed-out', reason });
    }
  }, []);

  useEffect(() => {
    void load();
    whenSignedOut(() => {
      setCsrfToken(undefined);
      client.clear();
      setState({ phase: 'signed-out', reason: 'Your session ended; sign in again.' });
    });
    return () => whenSignedOut(undefined);
  }, [load, client]);

  const api = useMemo<SessionApi>(
    () => ({
      state,
      async signIn(token: string) {
        const session = await call<ConsoleSession>('POST', '/platform/session', {
          headers: { authorization: `Bearer ${token.trim()}` },
        });
        setCsrfToken(session.csrfToken);
        client.clear();
        await load();
      },
      async signOut() {
        try {
          await call('DELETE', '/platform/session');
        } finally {
          setCsrfToken(undefined);
          client.clear();
          setState({ phase: 'signed-out', reason: 'Signed out.' });
        }
      },
      can: (permission: string) => state.phase === 'signed-in' && state.me.permissions.includes(permission),
    }),
    [state, client, load],
  );
  return <Ctx.Provider value={api}>{children}</Ctx.Provider>;
}

export function useSession(): SessionApi {
  const v = useContext(Ctx);
  if (!v) throw new Error('useSession outside SessionProvider');
  return v;
}

/** The signed-in principal; only for components under the signed-in shell. */
export function useMe(): Me {
  const { state } = useSession();
  if (state.phase !== 'signed-in') throw new Error('useMe before sign-in');
  return state.me;
}

export const useCan = () => useSession().can;
