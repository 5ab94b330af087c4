import { createHash, randomInt } from 'node:crypto';

export const TOKEN_PREFIX = 'svc_';
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/**
 * 43 base62 characters carry 256 bits, at least the 32 random bytes a token needs (docs/architecture.md, "Identity and
 * permissions").
 */
const SECRET_LENGTH = 43;
export const TOKEN_PATTERN = /^svc_[0-9A-Za-z]{43}$/;

export function generateToken(): string {
  let secret = '';
  for (let i = 0; i < SECRET_LENGTH; i++) secret += ALPHABET[randomInt(ALPHABET.length)];
  return TOKEN_PREFIX + secret;
}

/** Tokens are looked up by this hash, so comparing a presented token leaks no timing about stored ones. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
