/**
 * The console's one way to the api: the same platform and compat routes every client calls, authenticated by the
 * session cookie (sent by the browser, never readable here), with the session's CSRF token on every change.
 */

/** A refusal, in the words the api gave (both origins' error bodies), with what the console needs to act on it. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code?: string,
    readonly retryAfterS?: number,
  ) {
    super(message);
  }
}

let csrfToken: string | undefined;
export const setCsrfToken = (token: string | undefined) => {
  csrfToken = token;
};

/** The platform budget as the last answer reported it (X-RateLimit-*): shown in the header, so a person sees it. */
export interface Budget {
  limit: number;
  remaining: number;
  resetAt: number;
}
type Listener = () => void;
let budget: Budget | undefined;
const budgetListeners = new Set<Listener>();
export const budgetStore = {
  get: () => budget,
  subscribe: (l: Listener) => {
    budgetListeners.add(l);
    return () => budgetListeners.delete(l);
  },
};

/** Called when an answer says the session is gone (401): the app goes back to the sign-in page. */
let onSignedOut: (() => void) | undefined;
export const whenSignedOut = (f: (() => void) | undefined) => {
  onSignedOut = f;
};

function noteBudget(res: Response, path: string) {
  if (!path.startsWith('/platform/')) return;
  const limit = Number(res.headers.get('x-ratelimit-limit'));
  const remaining = Number(res.headers.get('x-ratelimit-remaining'));
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  if (!Number.isFinite(limit) || !Number.isFinite(remaining) || !res.headers.has('x-ratelimit-limit')) return;
  // X-RateLimit-Reset is seconds until the window resets (or an epoch time on some routes); either reads as a time.
  const resetAt = reset > 1e9 ? reset * 1000 : Date.now() + reset * 1000;
  budget = { limit, remaining, resetAt };
  for (const l of budgetListeners) l();
}

async function errorOf(res: Response): Promise<ApiError> {
  const retryAfter = Number(res.headers.get('retry-after'));
  let message = `${res.status} ${res.statusText}`;
  let code: string | undefined;
  try {
    const body = (await res.json()) as { message?: unknown; error?: unknown; code?: unknown };
    if (typeof body.message === 'string') message = body.message;
    else if (typeof body.error === 'string') message = body.error;
    if (typeof body.code === 'string') code = body.code;
  } catch {
    // Not JSON (a proxy's page): the status line says what is known.
  }
  return new ApiError(message, res.status, code, Number.isFinite(retryAfter) ? retryAfter : undefined);
}

export interface CallOptions {
  body?: unknown;
  /** A multipart body (an upload); sent as the browser encodes it. */
  form?: FormData;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Calls the api; platform answers are unwrapped from `{status, data}`, compat ones returned as they are. */
export async function call<T>(method: string, path: string, opts: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
  let body: BodyInit | undefined;
  if (opts.form) body = opts.form;
  else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(path, { method, headers, body, credentials: 'same-origin', signal: opts.signal });
  noteBudget(res, path);
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401 && !path.startsWith('/platform/session')) onSignedOut?.();
    throw err;
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  if (!text) return undefined as T;
  const json = JSON.parse(text) as unknown;
  if (path.startsWith('/platform/') && json && typeof json === 'object' && 'status' in json && 'data' in json)
    return (json as { data: T }).data;
  return json as T;
}

export const get = <T>(path: string, signal?: AbortSignal) => call<T>('GET', path, { signal });
export const post = <T>(path: string, body?: unknown) => call<T>('POST', path, { body });
export const patch = <T>(path: string, body?: unknown) => call<T>('PATCH', path, { body });
export const put = <T>(path: string, body?: unknown) => call<T>('PUT', path, { body });
export const del = <T>(path: string, body?: unknown) => call<T>('DELETE', path, { body });

/** A query string from the defined values only. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/**
 * A change whose answer is read as it arrives (a Server-Sent Events stream after a POST, which EventSource cannot
 * send): the response itself, with the session's CSRF token sent and a refusal thrown as ApiError.
 */
export async function callStream(
  method: string,
  path: string,
  body?: unknown,
  signal?: AbortSignal,
): Promise<Response> {
  const headers: Record<string, string> = { accept: 'text/event-stream' };
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    signal,
  });
  noteBudget(res, path);
  if (!res.ok) {
    const err = await errorOf(res);
    if (res.status === 401) onSignedOut?.();
    throw err;
  }
  return res;
}
