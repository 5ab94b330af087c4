/**
 * How a model call failed, in the words a turn ends with (workflow code imports this file: nothing here may import
 * an SDK or a Node module; failures.ts reads the SDKs' errors). A session shows the class and our message; the
 * provider's own text is kept only where it tells the user what to fix (a 400), and never carries the key.
 */
export const AI_ERROR_CODES = [
  /** The key was refused (401/403): store a valid key. */
  'provider_auth',
  /** 429, Anthropic's 529 / overloaded_error: retried a bounded number of times, then this. */
  'rate_limited',
  /** 5xx, a connection that failed or went silent. */
  'provider_unavailable',
  /** The provider refused the request as written (400, an unknown model…); its message says why. */
  'provider_bad_request',
  /** The provider answered something that is not its protocol (a malformed stream, unparsable tool arguments). */
  'provider_protocol',
  /** baseUrl leads to a loopback, private or special-purpose address and such providers are not allowed. */
  'provider_address_refused',
] as const;
export type AiErrorCode = (typeof AI_ERROR_CODES)[number];

export class AiProviderError extends Error {
  override name = 'AiProviderError';
  constructor(
    readonly code: AiErrorCode,
    message: string,
    readonly extra: { status?: number; retryAfterMs?: number } = {},
  ) {
    super(message);
  }
  get status(): number | undefined {
    return this.extra.status;
  }
  /** How long the provider asked us to wait, when it said (retry-after). */
  get retryAfterMs(): number | undefined {
    return this.extra.retryAfterMs;
  }
  /** Worth another attempt before anything was streamed: the same request may succeed a moment later. */
  get retriable(): boolean {
    return this.code === 'rate_limited' || this.code === 'provider_unavailable';
  }
}

export const isAiProviderError = (err: unknown): err is AiProviderError => err instanceof AiProviderError;

/** Response headers as the SDKs hold them (a Headers) or as a plain record. */
type HeaderBag = { get(name: string): string | null } | Record<string, string | undefined>;
const header = (headers: HeaderBag, name: string): string | undefined =>
  typeof headers.get === 'function' ? (headers.get(name) ?? undefined) : (headers as Record<string, string>)[name];

/**
 * `retry-after` as milliseconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3); OpenAI also sends
 * `retry-after-ms`. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: HeaderBag, now = Date.now()): number | undefined {
  const ms = header(headers, 'retry-after-ms');
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = header(headers, 'retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The provider's words, made safe to show: the key removed, control characters and length bounded. */
export function providerText(text: string | undefined, apiKey: string): string | undefined {
  if (!text) return undefined;
  let safe = apiKey.length >= 4 ? text.split(apiKey).join('[redacted]') : text;
  // eslint-disable-next-line no-control-regex
  safe = safe.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return safe.length > 500 ? `${safe.slice(0, 500)}…` : safe;
}

/** The error class of an HTTP answer that is not a success, from its status and the provider's error type. */
export function errorForStatus(
  status: number,
  detail: { type?: string; message?: string; retryAfterMs?: number },
): AiProviderError {
  const said = detail.message ? `: ${detail.message}` : '';
  const extra = { status, ...(detail.retryAfterMs === undefined ? {} : { retryAfterMs: detail.retryAfterMs }) };
  if (status === 401 || status === 403)
    return new AiProviderError(
      'provider_auth',
      `the provider refused the API key (HTTP ${status}); store a valid key for this provider`,
      extra,
    );
  if (status === 429 || status === 529 || detail.type === 'overloaded_error' || detail.type === 'rate_limit_error')
    return new AiProviderError(
      'rate_limited',
      status === 529 || detail.type === 'overloaded_error'
        ? `the provider is overloaded (HTTP ${status}); try again in a moment`
        : `the provider's rate limit was reached (HTTP ${status})${waitWords(detail.retryAfterMs)}`,
      extra,
    );
  if (status >= 500)
    return new AiProviderError('provider_unavailable', `the provider failed to answer (HTTP ${status})`, extra);
  if (status >= 300 && status < 400)
    return new AiProviderError(
      'provider_bad_request',
      `the provider answered with a redirect (HTTP ${status}); set baseUrl to the address it redirects to`,
      extra,
    );
  return new AiProviderError('provider_bad_request', `the provider refused the request (HTTP ${status})${said}`, extra);
}

/** An error the provider reported inside a stream that had started well (`event: error`, `data: {"error":…}`). */
export function errorInStream(detail: { type?: string; code?: string; message?: string }): AiProviderError {
  const kind = detail.type ?? detail.code ?? '';
  if (/overloaded|rate_limit/.test(kind)) return errorForStatus(kind.includes('overloaded') ? 529 : 429, detail);
  if (/authentication|permission|invalid_api_key/.test(kind)) return errorForStatus(401, detail);
  if (/invalid_request|not_found|too_large/.test(kind)) return errorForStatus(400, detail);
  return new AiProviderError(
    'provider_unavailable',
    `the provider stopped the answer with an error${detail.message ? `: ${detail.message}` : ''}`,
  );
}

function waitWords(ms: number | undefined): string {
  return ms === undefined ? '' : `; it asks to wait ${Math.ceil(ms / 1000)} s`;
}
