import net from 'node:net';
import { domainToASCII } from 'node:url';

/**
 * A custom domain's host name as a tenant may claim it: one real, fully qualified DNS name that the edge router can
 * match and get a certificate for. Pure: the api and the tests call the same rules.
 */

export class HostnameError extends Error {
  override name = 'HostnameError';
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * Suffixes under which anyone may register names: claiming one alone would claim every name beneath it. The full
 * public suffix list is not shipped; these are the ones people most often type by mistake, and a single label (a
 * top-level domain) is refused by the multi-label rule already.
 */
const PUBLIC_SUFFIXES = new Set([
  'co.uk',
  'org.uk',
  'me.uk',
  'ac.uk',
  'gov.uk',
  'com.au',
  'net.au',
  'org.au',
  'co.nz',
  'co.jp',
  'ne.jp',
  'or.jp',
  'co.za',
  'com.br',
  'com.cn',
  'com.mx',
  'co.in',
  'co.kr',
  'com.tr',
  'github.io',
  'herokuapp.com',
  'netlify.app',
  'vercel.app',
  'pages.dev',
  'workers.dev',
  'appspot.com',
  'cloudfront.net',
  'azurewebsites.net',
  'blogspot.com',
]);

/**
 * Lower-cases, drops a final dot and converts international names to their ASCII (punycode) form, then refuses what
 * cannot be a tenant's own host: a wildcard, an IP address, a single label, a public suffix alone, the service's own
 * domain (every deployment's stable host lives there) and `localhost`. Each refusal says what to send instead.
 */
export function normalizeHostname(input: string, opts: { edgeDomain: string }): string {
  const raw = input.trim().toLowerCase().replace(/\.$/, '');
  if (raw === '') throw new HostnameError('hostname is empty: send a host name such as "www.example.com"');
  if (raw.includes('*')) {
    throw new HostnameError(
      `"${input}" is a wildcard; wildcard domains are not supported: add each host name (e.g. "www.example.com") on its own`,
    );
  }
  if (net.isIP(raw.replace(/^\[|\]$/g, '')) !== 0) {
    throw new HostnameError(`"${input}" is an IP address; a custom domain is a DNS name such as "www.example.com"`);
  }
  if (/[/:?#@\s]/.test(raw)) {
    throw new HostnameError(
      `"${input}" is not a bare host name: send the name alone, without scheme, port or path (e.g. "www.example.com")`,
    );
  }
  const ascii = domainToASCII(raw);
  if (!ascii) throw new HostnameError(`"${input}" is not a valid international domain name (IDNA)`);
  if (ascii.length > 253) throw new HostnameError(`"${input}" is longer than the 253 characters DNS allows`);
  const labels = ascii.split('.');
  const bad = labels.find((l) => !LABEL.test(l));
  if (bad !== undefined) {
    throw new HostnameError(
      `"${input}" has the label "${bad}": each dot-separated label is 1 to 63 letters, digits or inner hyphens`,
    );
  }
  if (labels.length < 2) {
    throw new HostnameError(`"${input}" is a single label; send a fully qualified name such as "www.example.com"`);
  }
  if (/^[0-9]+$/.test(labels.at(-1)!)) {
    throw new HostnameError(`"${input}" ends in a numeric label, which no top-level domain is`);
  }
  if (PUBLIC_SUFFIXES.has(ascii)) {
    throw new HostnameError(
      `"${input}" is a public suffix; claim a name registered under it, e.g. "www.example.${ascii}"`,
    );
  }
  for (const own of [opts.edgeDomain.toLowerCase().replace(/\.$/, ''), 'localhost']) {
    if (ascii === own || ascii.endsWith(`.${own}`)) {
      throw new HostnameError(
        `"${input}" is under ${own}, where the service gives deployments their own addresses; a custom domain is a name you own elsewhere`,
      );
    }
  }
  return ascii;
}

/** The TXT record whose value proves ownership of `hostname`. */
export const challengeName = (hostname: string) => `_slipway-challenge.${hostname}`;
