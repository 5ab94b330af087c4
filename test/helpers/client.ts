import { LABELS } from '@shared/constants';

import { eventually, type Harness } from './harness';

export interface ApiResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small HTTP client for one token against the harness's api, as an agent would call it. */
export function client(h: Harness, token?: string) {
  async function call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const res = await fetch(`${h.baseUrl}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined && !(body instanceof FormData) ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body:
        body === undefined
          ? undefined
          : body instanceof FormData
            ? body
            : typeof body === 'string'
              ? body
              : JSON.stringify(body),
    });
    const text = await res.text();
    return {
      status: res.status,
      headers: res.headers,
      body: (text ? JSON.parse(text) : {}) as T,
    } satisfies ApiResponse<T>;
  }
  return {
    call,
    get: <T = Record<string, unknown>>(path: string) => call<T>('GET', path),
    post: <T = Record<string, unknown>>(path: string, body?: unknown) => call<T>('POST', path, body ?? {}),
    del: <T = Record<string, unknown>>(path: string) => call<T>('DELETE', path),

    /** DELETEs a compat deployment (204 expected), then waits until the engine holds none of its containers. */
    async destroyAndWait(id: string) {
      const r = await call('DELETE', `/compat/deployments/${id}`);
      if (r.status !== 204) throw new Error(`DELETE /compat/deployments/${id} answered ${r.status}, not 204`);
      await eventually(async () => {
        const left = await h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } });
        return left.length === 0 ? true : undefined;
      }, 'the containers to be removed');
    },

    /** Polls a compat deployment until it reaches one of `statuses`. */
    async waitFor(id: string, statuses: string[], timeoutMs = 60_000) {
      return eventually(
        async () => {
          const r = await call<{ status: string }>('GET', `/compat/deployments/${id}`);
          return statuses.includes(r.body.status)
            ? (r.body as Record<string, unknown> & { status: string })
            : undefined;
        },
        `deployment ${id} to reach ${statuses.join('|')}`,
        timeoutMs,
      );
    },
  };
}
