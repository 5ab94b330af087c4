import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

import { secretsKeyBytes } from '../config';

/** A value encrypted with AES-256-GCM: a fresh 96-bit IV per value, and the tag that proves it untouched. */
export interface Sealed {
  iv: string;
  tag: string;
  ciphertext: string;
}

/** Encrypts and decrypts vault values under one key; `aad` binds a value to its record so it cannot be moved. */
export function createSecretBox(key: Buffer) {
  if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  return {
    seal(plain: string, aad: string): Sealed {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(aad));
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return {
        iv: iv.toString('base64'),
        tag: cipher.getAuthTag().toString('base64'),
        ciphertext: ciphertext.toString('base64'),
      };
    },
    open(sealed: Sealed, aad: string): string {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(Buffer.from(aad));
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString(
        'utf8',
      );
    },
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;

/** The box under SECRETS_KEY, or undefined when the server has none. */
export function secretBoxFrom(secretsKey: string | undefined): SecretBox | undefined {
  const key = secretsKey === undefined ? undefined : secretsKeyBytes(secretsKey);
  return key ? createSecretBox(key) : undefined;
}

/**
 * The box for a store that refuses to work without SECRETS_KEY rather than keep plain text: each use gets the box, or
 * an error saying what cannot be done without the key.
 */
export function requiredSecretBox(secretsKey: string | undefined, withoutKey: string): () => SecretBox {
  const box = secretBoxFrom(secretsKey);
  return () => {
    if (!box) throw new Error(`SECRETS_KEY is not set: ${withoutKey}`);
    return box;
  };
}
