import { type LookupAll, OutboundTargetError, resolveTarget } from '../net-guard';

/**
 * A provider's baseUrl as stored: http(s), no credentials (the key has its own, sealed field), no query or
 * fragment (paths are appended to it), no trailing slash. Undefined with a reason when it cannot be one.
 */
export function normalizeBaseUrl(raw: string): { url: string; error?: undefined } | { url?: undefined; error: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { error: 'baseUrl is not a URL; write it as https://host[:port][/path]' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    return { error: `baseUrl must use https:// or http://, not ${url.protocol}//` };
  if (url.username || url.password)
    return { error: 'baseUrl must not carry credentials; the API key goes in apiKey, which is stored encrypted' };
  if (url.search || url.hash || raw.includes('?') || raw.includes('#'))
    return { error: 'baseUrl must not have a query or fragment; API paths are appended to it' };
  return { url: `${url.origin}${url.pathname.replace(/\/+$/, '')}` };
}

/**
 * Why the worker may not connect to `baseUrl`, or undefined. Every address the host resolves to must be public
 * unicast (net-guard) unless private providers are allowed; the worker checks again and pins when it connects.
 */
export async function baseUrlRefusal(
  baseUrl: string,
  opts: { allowPrivate: boolean; lookup?: LookupAll },
): Promise<string | undefined> {
  try {
    await resolveTarget(new URL(baseUrl), opts);
    return undefined;
  } catch (err) {
    if (!(err instanceof OutboundTargetError)) throw err;
    if (err.kind === 'special')
      return err.openable
        ? `${err.reason}; use the provider's public address (an operator can allow providers on private networks with ALLOW_PRIVATE_AI_PROVIDERS)`
        : `${err.reason}; use the provider's public address`;
    return `${err.reason}; check baseUrl`;
  }
}
