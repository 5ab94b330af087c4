import type { LookupFunction } from 'node:net';

import { Agent, request } from 'undici';

import { type LookupAll, OutboundTargetError, type ResolvedTarget, resolveTarget } from '../net-guard';
import { AiProviderError } from './errors';

export interface HttpOptions {
  /** Loopback/private providers allowed (ALLOW_PRIVATE_AI_PROVIDERS). */
  allowPrivate: boolean;
  /** Silence allowed before the answer's headers and between two of its bytes. */
  idleTimeoutMs: number;
  lookup?: LookupAll;
}

export interface ProviderResponse {
  status: number;
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array>;
  /** Ends the connection; the answer may be abandoned half read (a consumer stopped, an error). */
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

/** Our words for a failed connection: never undici's text, which may name internal addresses. */
function networkError(err: unknown, host: string, idleTimeoutMs: number): AiProviderError {
  const e = err as Error & { code?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  if (/TIMEOUT/.test(code) || e.name === 'TimeoutError')
    return new AiProviderError(
      'provider_unavailable',
      `the provider at ${host} was silent for ${idleTimeoutMs / 1000} s`,
    );
  if (code === 'ECONNREFUSED')
    return new AiProviderError('provider_unavailable', `the provider at ${host} refused the connection`);
  if (/CERT|SSL|TLS/i.test(code))
    return new AiProviderError(
      'provider_unavailable',
      `the TLS handshake with ${host} failed: its certificate is not trusted`,
    );
  return new AiProviderError('provider_unavailable', `the connection to the provider at ${host} failed or was cut`);
}

/** The caller's cancellation wins over whatever error it caused. */
function rethrow(err: unknown, signal: AbortSignal | undefined, host: string, idleTimeoutMs: number): never {
  if (signal?.aborted) throw signal.reason;
  if (err instanceof AiProviderError) throw err;
  throw networkError(err, host, idleTimeoutMs);
}

/**
 * Sends one request to a provider over a connection pinned to an address net-guard accepted. Redirects are not
 * followed (undici's request never does): a provider moved elsewhere is a configuration to fix, not a hop to take.
 */
export async function send(
  url: URL,
  init: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string; signal?: AbortSignal },
  opts: HttpOptions,
): Promise<ProviderResponse> {
  const target = await checkedTarget(url, opts);
  const agent = new Agent({
    connect: { lookup: pinnedLookup(target), timeout: opts.idleTimeoutMs },
    headersTimeout: opts.idleTimeoutMs,
    bodyTimeout: opts.idleTimeoutMs,
  });
  const close = () => agent.destroy().catch(() => undefined);
  let res: Awaited<ReturnType<typeof request>>;
  try {
    res = await request(url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      dispatcher: agent,
      signal: init.signal,
    });
  } catch (err) {
    await close();
    rethrow(err, init.signal, url.host, opts.idleTimeoutMs);
  }
  const headers = Object.fromEntries(
    Object.entries(res.headers).flatMap(([k, v]) =>
      v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v]],
    ),
  );
  const raw = res.body as AsyncIterable<Uint8Array>;
  async function* body() {
    try {
      for await (const chunk of raw) yield chunk;
    } catch (err) {
      rethrow(err, init.signal, url.host, opts.idleTimeoutMs);
    }
  }
  return { status: res.statusCode, headers, body: body(), close };
}

/** An error answer's JSON, read up to `limit` bytes; undefined when it is not JSON. */
export async function readJson(res: ProviderResponse, limit = 64 * 1024): Promise<unknown> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    chunks.push(chunk);
    size += chunk.byteLength;
    if (size >= limit) break;
  }
  try {
    return JSON.parse(Buffer.concat(chunks).subarray(0, limit).toString('utf8'));
  } catch {
    return undefined;
  }
}
