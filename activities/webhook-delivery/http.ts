import type { LookupFunction } from 'node:net';

import { Agent, request } from 'undici';

import { ignore } from '@shared/ignore';
import type { ResolvedTarget } from '@shared/net-guard';

/** The receiver must answer 2xx within this; reading what it says counts against it too. */
export const RECEIVER_TIMEOUT_MS = 8000;
/** What we keep of a receiver's answer; reading stops there, so an endless body costs us nothing. */
export const BODY_KEEP_BYTES = 4096;

/**
 * A resolver that answers only the checked address: the socket connects where the guard looked, whatever the
 * name's DNS says by now (DNS rebinding). Node asks with `all` when it races address families.
 */
const pinnedLookup =
  (target: ResolvedTarget): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };

export interface PinnedResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * POSTs to `url` over a connection to `target.address` only. The URL keeps its host name, so the Host header and
 * the TLS server name (and certificate check) are the name's. Redirects are not followed (undici's request never
 * does). One agent per attempt: nothing pinned outlives it.
 */
export async function postPinned(
  url: URL,
  target: ResolvedTarget,
  opts: { headers: Record<string, string>; body: string },
): Promise<PinnedResponse> {
  const agent = new Agent({ connect: { lookup: pinnedLookup(target), timeout: RECEIVER_TIMEOUT_MS } });
  const signal = AbortSignal.timeout(RECEIVER_TIMEOUT_MS);
  try {
    const res = await request(url, {
      method: 'POST',
      headers: opts.headers,
      body: opts.body,
      dispatcher: agent,
      signal,
    });
    const chunks: Buffer[] = [];
    let kept = 0;
    try {
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        kept += chunk.length;
        if (kept >= BODY_KEEP_BYTES) break;
      }
    } catch {
      // The answer's status is what counts; a body cut off by the deadline keeps what arrived.
    }
    res.body.destroy();
    const headers = Object.fromEntries(
      Object.entries(res.headers).flatMap(([k, v]) =>
        v === undefined ? [] : [[k, Array.isArray(v) ? v.join(', ') : v]],
      ),
    );
    return {
      status: res.statusCode,
      headers,
      body: Buffer.concat(chunks).subarray(0, BODY_KEEP_BYTES).toString('utf8'),
    };
  } finally {
    // destroy, not close: a receiver still streaming must not keep the socket (or this activity) waiting.
    await agent.destroy().catch(ignore('the answer is in hand: tearing down this one-attempt agent decides nothing'));
  }
}
