import {
  type QueryKey,
  useMutation,
  type UseMutationOptions,
  useQuery,
  useQueryClient,
  type UseQueryOptions,
} from '@tanstack/react-query';
import { useEffect, useRef, useSyncExternalStore } from 'react';

import { budgetStore, call, type CallOptions, get } from './client';

/** A GET of the api, cached under its path (so a change can invalidate every read below a path prefix). */
export function useApi<T>(path: string | undefined, opts: Omit<UseQueryOptions<T>, 'queryKey' | 'queryFn'> = {}) {
  return useQuery<T>({
    queryKey: [path],
    queryFn: ({ signal }) => get<T>(path!, signal),
    enabled: path !== undefined && (opts.enabled ?? true),
    ...opts,
  });
}

/**
 * A change; on success it drops the cached reads whose path starts with any of `invalidates`, so lists show it.
 */
export function useChange<In = void, Out = unknown>(
  method: string,
  path: string | ((input: In) => string),
  opts: {
    invalidates?: string[];
    body?: (input: In) => unknown;
    form?: (input: In) => FormData;
  } & Omit<UseMutationOptions<Out, Error, In>, 'mutationFn'> = {},
) {
  const client = useQueryClient();
  const { invalidates = [], body, form, onSuccess, ...rest } = opts;
  return useMutation<Out, Error, In>({
    mutationFn: (input: In) => {
      const p = typeof path === 'function' ? path(input) : path;
      const o: CallOptions = {};
      if (form) o.form = form(input);
      else if (body) o.body = body(input);
      else if (input !== undefined && method !== 'DELETE') o.body = input;
      return call<Out>(method, p, o);
    },
    onSuccess: async (...args) => {
      await client.invalidateQueries({
        predicate: (q) => {
          const key = (q.queryKey as QueryKey)[0];
          return typeof key === 'string' && invalidates.some((prefix) => key.startsWith(prefix));
        },
      });
      await onSuccess?.(...args);
    },
    ...rest,
  });
}

export const useBudget = () => useSyncExternalStore(budgetStore.subscribe, budgetStore.get);

export interface StreamEvent {
  event: string;
  data: unknown;
  id: string;
}

/**
 * Follows a Server-Sent Events route (the session cookie goes with it) until the component leaves; the browser's
 * EventSource reconnects by itself with Last-Event-ID. One connection per stream: browsers allow six per host, so a
 * page opens only the streams it shows.
 */
export function useEventStream(path: string | undefined, events: string[], onEvent: (e: StreamEvent) => void): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const names = events.join(',');
  useEffect(() => {
    if (!path) return;
    const source = new EventSource(path, { withCredentials: true });
    const listeners = names.split(',').map((name) => {
      const l = (e: MessageEvent<string>) => {
        let data: unknown = e.data;
        try {
          data = JSON.parse(e.data);
        } catch {
          // A plain-text event stays text.
        }
        handler.current({ event: name, data, id: e.lastEventId });
      };
      source.addEventListener(name, l as EventListener);
      return [name, l] as const;
    });
    return () => {
      for (const [name, l] of listeners) source.removeEventListener(name, l as EventListener);
      source.close();
    };
  }, [path, names]);
}
