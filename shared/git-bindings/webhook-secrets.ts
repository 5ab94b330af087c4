import { randomBytes } from 'node:crypto';

import type { Sealed } from '../secrets/box';
import { requiredSecretBox } from '../secrets/box';
import type { GitProvider } from './types';

/** Where each provider lives when a connection names no base URL; a generic connection must name one. */
export const DEFAULT_BASE_URLS: Record<Exclude<GitProvider, 'generic'>, string> = {
  github: 'https://github.com',
  gitlab: 'https://gitlab.com',
  gitea: 'https://gitea.com',
};

/** A fresh webhook secret: 32 random bytes as hex, which every provider's form accepts. */
export const newWebhookSecret = (): string => randomBytes(32).toString('hex');

/**
 * A binding's webhook secret at rest: HMAC verification needs the secret itself, so it is sealed under SECRETS_KEY
 * with the binding's identity as associated data (a sealed value copied onto another binding fails to open), as a
 * bucket link's key is.
 */
export function createWebhookSecretSealer(secretsKey: string | undefined) {
  const box = requiredSecretBox(secretsKey, 'a Git binding’s webhook secret cannot be stored or read without it');
  const aad = (b: { _id: string; orgId: string }) => `git-binding-webhook/${b.orgId}/${b._id}`;
  return {
    seal: (b: { _id: string; orgId: string }, secret: string): Sealed => box().seal(secret, aad(b)),
    open: (b: { _id: string; orgId: string; secretSealed: Sealed }): string => box().open(b.secretSealed, aad(b)),
  };
}

export type WebhookSecretSealer = ReturnType<typeof createWebhookSecretSealer>;
