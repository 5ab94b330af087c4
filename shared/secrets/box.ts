import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

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
