import { CliError } from './errors';
import type { Credentials } from './settings';

export interface Response<T> {
  status: number;
  body: T;
  headers: Headers;
}

type ErrorBody = {
  error?: string;
  code?: string;
  message?: string;
  details?: Record<string, unknown>;
};

/** One line of "what to do next" from an error body of either origin, when it names one. */
function nextStep(body: ErrorBody): string | undefined {
  const d = body.details ?? {};
  for (const key of ['next', 'hint', 'allowed']) {
    const v = d[key];
    if (typeof v === 'string') return v;
    if (Array.isArray(v)) return `${key}: ${v.join(', ')}`;
  }
  return undefined;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The API as the CLI calls it: Bearer token, JSON in and out, an error body of either origin turned into one
 * CliError line. A 429 with a Retry-After of a minute or less is waited out (four times at most): a follower
 * sharing the organisation's read budget with other clients slows down instead of failing.
 */
export function createApi(creds: Credentials) {
  async function request<T>(
    method: string,
    path: string,
    opts: { json?: unknown; form?: FormData; accept?: number[] } = {},
  ): Promise<Response<T>> {
    for (let attempt = 0; ; attempt++) {
      let res: globalThis.Response;
      try {
        res = await fetch(`${creds.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${creds.token}`,
            ...(opts.json !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          body: opts.form ?? (opts.json !== undefined ? JSON.stringify(opts.json) : undefined),
        });
      } catch (err) {
        const code = (err as { cause?: { code?: string } }).cause?.code;
        throw new CliError(
          `cannot reach ${creds.url}${code ? ` (${code})` : ''}`,
          'check that the server runs and the address is right (--url, SLIPWAY_URL or slipway login)',
        );
      }
      const text = await res.text();
      let body: unknown = {};
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = { error: text.slice(0, 200) };
        }
      }
      if (res.ok || opts.accept?.includes(res.status))
        return { status: res.status, body: body as T, headers: res.headers };
      const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
      if (res.status === 429 && attempt < 4 && retryAfter <= 60) {
        await sleep(Math.max(retryAfter, 1) * 1000);
        continue;
      }
      throw apiError(res.status, body as ErrorBody, retryAfter);
    }
  }
  return {
    url: creds.url,
    request,
    get: <T>(path: string, accept?: number[]) => request<T>('GET', path, accept ? { accept } : {}),
    post: <T>(path: string, json: unknown) => request<T>('POST', path, { json }),
    del: (path: string) => request<unknown>('DELETE', path),
  };
}

export type Api = ReturnType<typeof createApi>;

export function apiError(status: number, body: ErrorBody, retryAfter?: number): CliError {
  const message = body.error ?? body.message ?? `the server answered ${status}`;
  const code = body.code ? `${body.code}: ` : '';
  const next =
    nextStep(body) ??
    (status === 401
      ? 'log in again with slipway login (or set SLIPWAY_TOKEN)'
      : status === 429 && retryAfter
        ? `retry in ${retryAfter} s`
        : undefined);
  return new CliError(`${code}${message}`, next, 1, { status, ...body });
}

/** A platform success is `{status: "success", data}`; a compat one is the object itself. */
export function unwrap<T>(body: unknown): T {
  const b = body as { status?: unknown; data?: unknown };
  return (b && b.status === 'success' && b.data !== undefined ? b.data : body) as T;
}
