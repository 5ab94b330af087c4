import type { LookupFunction } from 'node:net';

import { Agent, fetch, Headers, Response } from 'undici';

import { type LookupAll, OutboundTargetError, type ResolvedTarget, resolveTarget } from '../net-guard';
import { AiProviderError, retryAfterMs } from './errors';

export interface HttpOptions {
  /** Loopback/private providers allowed (ALLOW_PRIVATE_AI_PROVIDERS). */
  allowPrivate: boolean;
  /** Silence allowed before the answer's headers and between two of its bytes. */
  idleTimeoutMs: number;
  lookup?: LookupAll;
}

/** The fetch both SDKs take in place of the global one (their `fetch` option). */
export type ProviderFetch = (
  input: string | URL | globalThis.Request,
  init?: RequestInit,
) => Promise<globalThis.Response>;

export interface GuardedFetch {
  fetch: ProviderFetch;
  /** Requests sent so far, the SDK's own retries included: one budget of attempts covers every layer. */
  sent(): number;
  /** Ends every connection; an answer may be abandoned half read (a consumer stopped, an error). */
  close(): Promise<void>;
}

/**
 * A resolver that answers only the checked address, so the socket goes where net-guard looked whatever the
 * name's DNS says by now (rebinding); the URL keeps its name for the Host header and TLS.
 */
const pinnedLookup =
  (target: ResolvedTarget): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };

async function checkedTarget(url: URL, opts: HttpOptions): Promise<ResolvedTarget> {
  try {
    return await resolveTarget(url, { allowPrivate: opts.allowPrivate, lookup: opts.lookup });
  } catch (err) {
    if (!(err instanceof OutboundTargetError)) throw err;
    if (err.kind === 'special')
      throw new AiProviderError(
        'provider_address_refused',
        err.openable
          ? `${err.reason}; a provider on such an address needs ALLOW_PRIVATE_AI_PROVIDERS=true on this installation`
          : err.reason,
      );
    if (err.kind === 'unresolvable') throw new AiProviderError('provider_unavailable', `${err.reason}; check baseUrl`);
    throw new AiProviderError('provider_bad_request', `${err.reason}; baseUrl must be http:// or https://`);
  }
}

/** A body that fails as a protocol error once it passes `maxBytes`. */
function bounded(body: ReadableStream<Uint8Array>, maxBytes: number): ReadableStream<Uint8Array> {
  let total = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        total += chunk.byteLength;
        if (total <= maxBytes) return out.enqueue(chunk);
        out.error(
          new AiProviderError(
            'provider_protocol',
            `the provider's answer passed ${Math.round(maxBytes / 1024 / 1024)} MiB`,
          ),
        );
      },
    }),
  );
}

/**
 * The fetch an SDK calls a provider with. The provider's host is resolved and checked by net-guard once, here,
 * before the SDK sends anything (a refused address is never retried), and every connection is pinned to that
 * address. On top of what the SDK does itself:
 * - a request for any other origin is refused: the SDK has no reason to leave baseUrl, and we follow no redirect
 *   (a provider moved elsewhere is a configuration to fix, not a hop to take);
 * - every answer is bounded to `maxBytes`: the SDKs buffer an SSE line without limit, and the server is a
 *   tenant's choice;
 * - an error answer that asks (retry-after) to wait longer than `maxRetryDelayMs` is marked `x-should-retry:
 *   false`, the SDKs' own switch: they would otherwise wait whatever it says (the OpenAI SDK's wait cannot even
 *   be cancelled), so such a call ends at once with rate_limited instead.
 */
export async function guardedFetch(
  baseUrl: string,
  opts: HttpOptions & { maxBytes: number; maxRetryDelayMs: number },
): Promise<GuardedFetch> {
  const base = new URL(baseUrl);
  const target = await checkedTarget(base, opts);
  const agent = new Agent({
    connect: { lookup: pinnedLookup(target), timeout: opts.idleTimeoutMs },
    headersTimeout: opts.idleTimeoutMs,
    bodyTimeout: opts.idleTimeoutMs,
  });
  let sent = 0;

  const guarded = async (input: string | URL | globalThis.Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    if (url.origin !== base.origin)
      throw new AiProviderError(
        'provider_address_refused',
        `a request for ${url.origin} was refused: only the provider's own ${base.origin} is called`,
      );
    sent++;
    const res = await fetch(url, {
      ...(init as Parameters<typeof fetch>[1]),
      dispatcher: agent,
      redirect: 'manual',
    });
    const headers = new Headers(res.headers);
    const wait = res.ok ? undefined : retryAfterMs(res.headers);
    if (wait !== undefined && wait > opts.maxRetryDelayMs) headers.set('x-should-retry', 'false');
    const body = res.body && bounded(res.body as ReadableStream<Uint8Array>, opts.maxBytes);
    return new Response(body, { status: res.status, statusText: res.statusText, headers });
  };

  return {
    fetch: guarded as unknown as ProviderFetch,
    sent: () => sent,
    close: () => agent.destroy(),
  };
}
