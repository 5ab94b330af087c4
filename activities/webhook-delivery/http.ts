import type { LookupFunction } from 'node:net';

import { Agent, request } from 'undici';

import { ignore } from '@shared/ignore';
import type { ResolvedTarget } from '@shared/net-guard';

/** The receiver must answer 2xx within this; reading what it says counts against it too. */
export const RECEIVER_TIMEOUT_MS = 8000;
/** What we keep of a receiver's answer; reading stops there, so an endless body costs us nothing. */
export const BODY_KEEP_BYTES = 4096;
/**
 * How long a connection to a receiver stays open unused. Below the 5 s that Node's http server (and so most
 * receivers) keeps one: the receiver closing a socket we are about to reuse would cost the attempt.
 */
const KEEP_ALIVE_MS = 4000;
/** Receivers (origin and checked address) whose idle connections are kept; the least recently used goes first. */
const POOLED_TARGETS = 256;

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
 * Kept-alive connections to receivers, one undici agent per origin *and checked address*: an attempt reuses a
 * connection only to the address its own guard check answered, so a name that resolves elsewhere by now gets a new
 * agent pinned there (and the old one's connections are never used for it). A fresh TCP (and TLS) handshake per
 * delivery was most of an attempt's cost at volume.
 */
export function createReceiverPool(opts: { targets?: number } = {}) {
  const max = opts.targets ?? POOLED_TARGETS;
  const agents = new Map<string, { agent: Agent; inFlight: number }>();

  const retire = (agent: Agent) =>
    agent.close().catch(ignore('an idle agent past its use: closing it decides nothing for any attempt'));

  /** The agent for `key`, most recently used last; an idle one is retired when too many are kept. */
  function acquire(key: string, target: ResolvedTarget) {
    let entry = agents.get(key);
    if (entry) agents.delete(key);
    else
      entry = {
        agent: new Agent({
          connect: { lookup: pinnedLookup(target), timeout: RECEIVER_TIMEOUT_MS },
          keepAliveTimeout: KEEP_ALIVE_MS,
          keepAliveMaxTimeout: KEEP_ALIVE_MS,
        }),
        inFlight: 0,
      };
    agents.set(key, entry);
    entry.inFlight++;
    for (const [k, e] of agents) {
      if (agents.size <= max) break;
      if (e.inFlight > 0 || k === key) continue;
      agents.delete(k);
      void retire(e.agent);
    }
    return entry;
  }

  return {
    /**
     * POSTs to `url` over a connection to `target.address` only. The URL keeps its host name, so the Host header and
     * the TLS server name (and certificate check) are the name's. Redirects are not followed (undici's request never
     * does). An answer read to its end leaves the connection open for the next attempt; one cut short (past
     * BODY_KEEP_BYTES, or the deadline) closes it.
     */
    async post(
      url: URL,
      target: ResolvedTarget,
      body: { headers: Record<string, string>; body: string },
    ): Promise<PinnedResponse> {
      const entry = acquire(`${url.origin} ${target.address}`, target);
      const signal = AbortSignal.timeout(RECEIVER_TIMEOUT_MS);
      try {
        const res = await request(url, {
          method: 'POST',
          headers: body.headers,
          body: body.body,
          dispatcher: entry.agent,
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
        // A body read to its end has handed its socket back already; one left unread must not hold it.
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
        entry.inFlight--;
      }
    },

    /** Closes every kept connection (the worker stopping, a test ending). */
    async close() {
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((e) => e.agent.destroy().catch(ignore('shutting down: nothing waits on it'))));
    },
  };
}

export type ReceiverPool = ReturnType<typeof createReceiverPool>;
