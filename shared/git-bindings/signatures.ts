import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

import type { GitProvider } from './types';

/** How far a generic delivery's timestamp may be from our clock: a captured delivery replays for no longer. */
export const GENERIC_WINDOW_S = 300;

/** The headers a delivery may carry, by their lower-case names as Node gives them. */
export type DeliveryHeaders = Record<string, string | string[] | undefined>;

const one = (h: DeliveryHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

export const hmacHex = (secret: string, data: Buffer | string): string =>
  createHmac('sha256', secret).update(data).digest('hex');

/** Equal in constant time: both sides hashed first, so the buffers compared are of one length whatever was sent. */
export function sameSecret(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}

/** `sha256=<hex>` (or bare hex) against the HMAC of `data`, in constant time over equal-length buffers. */
function signatureMatches(
  given: string | undefined,
  secret: string,
  data: Buffer | string,
  prefixed: boolean,
): boolean {
  if (!given) return false;
  const hex = prefixed ? (given.startsWith('sha256=') ? given.slice(7) : undefined) : given;
  if (hex === undefined) return false;
  const expected = Buffer.from(hmacHex(secret, data), 'utf8');
  const got = Buffer.from(hex.trim().toLowerCase(), 'utf8');
  return got.length === expected.length && timingSafeEqual(got, expected);
}

/** GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`. */
export const verifyGithub = (h: DeliveryHeaders, raw: Buffer, secret: string): boolean =>
  signatureMatches(one(h, 'x-hub-signature-256'), secret, raw, true);

/** Gitea: `X-Gitea-Signature: <hex HMAC-SHA256 of the raw body>`. */
export const verifyGitea = (h: DeliveryHeaders, raw: Buffer, secret: string): boolean =>
  signatureMatches(one(h, 'x-gitea-signature'), secret, raw, false);

/** GitLab sends the secret itself: `X-Gitlab-Token: <secret>`. */
export const verifyGitlab = (h: DeliveryHeaders, _raw: Buffer, secret: string): boolean => {
  const given = one(h, 'x-gitlab-token');
  return given !== undefined && sameSecret(given, secret);
};

/**
 * Ours, for any other sender: `X-Slipway-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">` with
 * `X-Slipway-Timestamp: <unix seconds>` no further than five minutes from our clock, so a captured delivery cannot be
 * sent again later under a new delivery ID.
 */
export function verifyGeneric(h: DeliveryHeaders, raw: Buffer, secret: string, now = Date.now()): boolean {
  const ts = one(h, 'x-slipway-timestamp');
  if (!ts || !/^\d{1,12}$/.test(ts)) return false;
  if (Math.abs(now / 1000 - Number(ts)) > GENERIC_WINDOW_S) return false;
  return signatureMatches(one(h, 'x-slipway-signature'), secret, Buffer.concat([Buffer.from(`${ts}.`), raw]), true);
}

interface Scheme {
  /** The header whose presence says a delivery uses this scheme. */
  signedBy: string;
  verify: (h: DeliveryHeaders, raw: Buffer, secret: string, now?: number) => boolean;
  event: (h: DeliveryHeaders) => string | undefined;
  deliveryId: (h: DeliveryHeaders) => string | undefined;
}

const SCHEMES: Record<GitProvider, Scheme> = {
  github: {
    signedBy: 'x-hub-signature-256',
    verify: verifyGithub,
    event: (h) => one(h, 'x-github-event'),
    deliveryId: (h) => one(h, 'x-github-delivery'),
  },
  gitlab: {
    signedBy: 'x-gitlab-token',
    verify: verifyGitlab,
    event: (h) => one(h, 'x-gitlab-event'),
    deliveryId: (h) => one(h, 'x-gitlab-event-uuid') ?? one(h, 'idempotency-key'),
  },
  gitea: {
    signedBy: 'x-gitea-signature',
    verify: verifyGitea,
    event: (h) => one(h, 'x-gitea-event'),
    deliveryId: (h) => one(h, 'x-gitea-delivery'),
  },
  generic: {
    signedBy: 'x-slipway-signature',
    verify: verifyGeneric,
    event: (h) => one(h, 'x-slipway-event') ?? 'push',
    deliveryId: (h) => one(h, 'x-slipway-delivery'),
  },
};

/** Gitea sends GitHub's headers too: its own are looked for first. */
const DETECT_ORDER: GitProvider[] = ['gitea', 'github', 'gitlab', 'generic'];

export type Verified =
  | { ok: true; provider: GitProvider; event: string; deliveryId: string | undefined }
  | { ok: false; provider: GitProvider | null; reason: string };

/**
 * Verifies a delivery with the binding's secret: by the provider's scheme when the binding names one, else by the
 * scheme whose signature header the delivery carries. Events are named as GitHub names them (`push`, `ping`).
 */
export function verifyDelivery(
  h: DeliveryHeaders,
  raw: Buffer,
  secret: string,
  expected: GitProvider | null,
  now = Date.now(),
): Verified {
  const provider = expected ?? DETECT_ORDER.find((p) => one(h, SCHEMES[p].signedBy) !== undefined) ?? null;
  if (!provider) return { ok: false, provider: null, reason: 'unsigned: no signature header of any known scheme' };
  const scheme = SCHEMES[provider];
  if (one(h, scheme.signedBy) === undefined)
    return { ok: false, provider, reason: `unsigned: no ${scheme.signedBy} header` };
  if (!scheme.verify(h, raw, secret, now))
    return {
      ok: false,
      provider,
      reason:
        provider === 'generic'
          ? 'bad signature, or X-Slipway-Timestamp more than 5 minutes from our clock'
          : `bad signature in ${scheme.signedBy}`,
    };
  const named = scheme.event(h) ?? '';
  const event = provider === 'gitlab' && named === 'Push Hook' ? 'push' : named;
  return { ok: true, provider, event, deliveryId: scheme.deliveryId(h) };
}

const ZERO_SHA = /^0+$/;
const COMMIT_SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

export type Push =
  | { kind: 'push'; ref: string; commit: string }
  | { kind: 'deletion'; ref: string }
  | { kind: 'malformed'; ref: string | null; why: string };

/**
 * What a push payload says: the ref and the commit it moved to (`after`; GitLab's `checkout_sha` when set). A deleted
 * branch (`deleted: true`, or `after` all zeros) is a deletion.
 */
export function readPush(provider: GitProvider, raw: Buffer): Push {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    // Unparseable text is the sender's fault and says so in the delivery's outcome.
    return { kind: 'malformed', ref: null, why: 'the body is not JSON' };
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return { kind: 'malformed', ref: null, why: 'the body is not a JSON object' };
  const b = body as Record<string, unknown>;
  const ref = typeof b.ref === 'string' ? b.ref : null;
  if (!ref) return { kind: 'malformed', ref: null, why: 'the payload has no ref' };
  const after = typeof b.after === 'string' ? b.after : undefined;
  if (b.deleted === true || (after !== undefined && ZERO_SHA.test(after))) return { kind: 'deletion', ref };
  const checkout = provider === 'gitlab' && typeof b.checkout_sha === 'string' ? b.checkout_sha : undefined;
  const commit = checkout ?? after;
  if (!commit || !COMMIT_SHA.test(commit))
    return { kind: 'malformed', ref, why: 'the payload has no full commit SHA in after' };
  return { kind: 'push', ref, commit };
}
