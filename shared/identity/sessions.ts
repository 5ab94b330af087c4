import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * The web console signs in by exchanging an access token for a session: a token of its own (same user, same scopes,
 * never longer-lived than the one it came from, revoked with it) whose secret only ever travels in an httpOnly cookie,
 * so script on the page cannot read it. Changes sent with the cookie carry the session's CSRF token in a header,
 * which a page of another origin cannot read or forge (docs/architecture.md, "Web console").
 */
export const SESSION_COOKIE = 'slipway_session';
export const CSRF_HEADER = 'x-csrf-token';
export const SESSION_TOKEN_NAME = 'console session';

/**
 * Derived from the session's secret, so nothing is stored for it and it changes with every session; knowing it
 * reveals nothing of the secret (a one-way hash under its own label).
 */
export function csrfTokenOf(sessionSecret: string): string {
  return createHash('sha256').update(`slipway-csrf:${sessionSecret}`).digest('base64url');
}

export function csrfMatches(sessionSecret: string, presented: string | undefined): boolean {
  if (!presented) return false;
  const want = Buffer.from(csrfTokenOf(sessionSecret));
  const got = Buffer.from(presented);
  return want.length === got.length && timingSafeEqual(want, got);
}

/** Methods that change nothing: they need no CSRF token (and the console's reads never change state). */
export const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
