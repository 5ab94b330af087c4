import { Agent, request } from 'undici';

import { localhostLookup } from '@shared/localhost-lookup';

export { localhostLookup };

/** A keep-alive client that reaches deployments' `http://<name>-<id>.localhost:<port>` URLs as a browser does. */
export const edgeAgent = () => new Agent({ connect: { lookup: localhostLookup } });
/** One connection per request: where a retry goes, so it cannot pick another kept connection the router closed. */
const fresh = new Agent({ pipelining: 0, connect: { lookup: localhostLookup } });

export interface EdgeAnswer {
  status: number;
  type: string;
  body: string;
}

/** Errors of a connection that ended before any answer: nothing was processed, so a GET may be sent again. */
const CLOSED_BEFORE_ANSWER = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

/**
 * GET through the edge router the way browsers and RFC 9112 §9.3.1 clients do it: Caddy closes its idle
 * connections at every config change (any deployment's publish, stop or removal), so a request written to a kept
 * connection just then finds it closed, and is sent once more on a new connection. An answer, whatever its status,
 * is never retried; nor is a refused connection.
 */
export async function edgeGet(
  url: string,
  opts: { host?: string; accept?: string; agent: Agent; onRetry?: () => void },
): Promise<EdgeAnswer> {
  const headers: Record<string, string> = {};
  if (opts.host) headers.host = opts.host;
  if (opts.accept) headers.accept = opts.accept;
  const once = async (dispatcher: Agent) => {
    const res = await request(url, { headers, dispatcher });
    return { status: res.statusCode, type: String(res.headers['content-type']), body: await res.body.text() };
  };
  try {
    return await once(opts.agent);
  } catch (err) {
    if (!CLOSED_BEFORE_ANSWER.has((err as { code?: string }).code ?? '')) throw err;
    opts.onRetry?.();
    return once(fresh);
  }
}
