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
 * sharing the budget with other clients slows down instead of failing.
 */
export function createApi(creds: Credentials) {
  async function send(
    method: string,
    path: string,
    opts: { headers?: Record<string, string>; body?: string | FormData; signal?: AbortSignal },
  ) {
    try {
      return await fetch(`${creds.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${creds.token}`, ...opts.headers },
        ...(opts.body !== undefined ? { body: opts.body } : {}),
        ...(opts.signal ? { signal: opts.signal } : {}),
      });
    } catch (err) {
      if (opts.signal?.aborted) throw err;
      const code = (err as { cause?: { code?: string } }).cause?.code;
      throw new CliError(
        `cannot reach ${creds.url}${code ? ` (${code})` : ''}`,
        'check that the server runs and the address is right (--url, SLIPWAY_URL or slipway login)',
      );
    }
  }

  async function bodyOf(res: globalThis.Response): Promise<unknown> {
    const text = await res.text();
    if (!text) return {};
    try {
      return JSON.parse(text);
    } catch {
      return { error: text.slice(0, 200) };
    }
  }

  async function request<T>(
    method: string,
    path: string,
    opts: { json?: unknown; form?: FormData; accept?: number[]; headers?: Record<string, string> } = {},
  ): Promise<Response<T>> {
    for (let attempt = 0; ; attempt++) {
      const body = opts.form ?? (opts.json !== undefined ? JSON.stringify(opts.json) : undefined);
      const res = await send(method, path, {
        headers: { ...(opts.json !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
        ...(body !== undefined ? { body } : {}),
      });
      const answer = await bodyOf(res);
      if (res.ok || opts.accept?.includes(res.status))
        return { status: res.status, body: answer as T, headers: res.headers };
      const retryAfter = Number(res.headers.get('retry-after') ?? NaN);
      if (res.status === 429 && attempt < 4 && retryAfter <= 60) {
        await sleep(Math.max(retryAfter, 1) * 1000);
        continue;
      }
      throw apiError(res.status, answer as ErrorBody, retryAfter);
    }
  }

  /**
   * A Server-Sent Events stream, opened (2xx) and handed over unread with its headers (the budget left); a refusal is
   * a CliError as for `request`, so a 404 or a spent budget reads the same whichever way the CLI asked.
   */
  async function stream(
    path: string,
    opts: { lastEventId?: string; signal: AbortSignal },
  ): Promise<{ body: ReadableStream<Uint8Array>; headers: Headers }> {
    for (let attempt = 0; ; attempt++) {
      const res = await send('GET', path, {
        headers: { accept: 'text/event-stream', ...(opts.lastEventId ? { 'last-event-id': opts.lastEventId } : {}) },
        signal: opts.signal,
      });
      if (res.ok && res.body) return { body: res.body, headers: res.headers };
      const body = await bodyOf(res);
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
    stream,
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
  // The HTTP status last: a platform body's own `status` is only its "error" marker.
  return new CliError(`${code}${message}`, next, 1, { ...body, status });
}

/** A platform success is `{status: "success", data}`; a compat one is the object itself. */
export function unwrap<T>(body: unknown): T {
  const b = body as { status?: unknown; data?: unknown };
  return (b && b.status === 'success' && b.data !== undefined ? b.data : body) as T;
}

/** Requests a follower keeps back for the person's other commands (a destroy in another terminal). */
const BUDGET_RESERVE = 10;

/**
 * How long a repeated reader waits before its next read so that the rest of its budget lasts until the window
 * resets: the answer's X-RateLimit-Remaining spread over the time to X-RateLimit-Reset, a few kept in reserve.
 * Never less than `minMs`; `minMs` when the server sent no budget.
 */
export function paceOf(headers: Headers, minMs: number, now = Date.now()): number {
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? NaN);
  const resetMs = Number(headers.get('x-ratelimit-reset') ?? NaN) * 1000;
  if (!Number.isFinite(remaining) || !Number.isFinite(resetMs)) return minMs;
  const left = Math.max(0, resetMs - now);
  const spare = remaining - BUDGET_RESERVE;
  return Math.max(minMs, spare > 0 ? Math.ceil(left / spare) : left);
}
