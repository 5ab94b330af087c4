import { randomBytes } from 'node:crypto';

import { createSecretBox, requiredSecretBox, secretBoxFrom } from '@shared/secrets/box';

describe('secret box', () => {
  const box = createSecretBox(randomBytes(32));

  it('opens what it sealed, for the same record only', () => {
    const sealed = box.seal('hunter2 ✓', 'org1/s1');
    expect(box.open(sealed, 'org1/s1')).toBe('hunter2 ✓');
    // Copied onto another record (another org's), the value does not open.
    expect(() => box.open(sealed, 'org2/s1')).toThrow('Unsupported state or unable to authenticate data');
  });

  it('never holds the value in the clear, and seals the same value differently each time', () => {
    const a = box.seal('the same value', 'r');
    const b = box.seal('the same value', 'r');
    expect(JSON.stringify(a)).not.toContain('the same value');
    expect(Buffer.from(a.ciphertext, 'base64').toString('utf8')).not.toContain('same');
    expect(a.iv).not.toBe(b.iv);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(Buffer.from(a.iv, 'base64')).toHaveLength(12);
  });

  it('refuses a value whose ciphertext or tag was changed', () => {
    const sealed = box.seal('value', 'r');
    const flipped = Buffer.from(sealed.ciphertext, 'base64');
    flipped[0] = flipped[0]! ^ 1;
    expect(() => box.open({ ...sealed, ciphertext: flipped.toString('base64') }, 'r')).toThrow();
    expect(() => box.open({ ...sealed, tag: box.seal('value', 'r').tag }, 'r')).toThrow();
  });

  it('refuses to open under another key', () => {
    expect(() => createSecretBox(randomBytes(32)).open(box.seal('value', 'r'), 'r')).toThrow();
  });

  it.each([16, 31, 33, 0])('refuses a key of %i bytes', (n) => {
    expect(() => createSecretBox(randomBytes(n))).toThrow('the secrets key must be 32 bytes');
  });

  it('seals an empty value', () => {
    expect(box.open(box.seal('', 'r'), 'r')).toBe('');
  });
});

describe('the secret box under SECRETS_KEY', () => {
  const key = randomBytes(32);

  it('takes the key as base64 or hex, and is the same box either way', () => {
    const sealed = secretBoxFrom(key.toString('base64'))!.seal('value', 'r');
    expect(secretBoxFrom(key.toString('hex'))!.open(sealed, 'r')).toBe('value');
  });

  it('is absent without a key', () => {
    expect(secretBoxFrom(undefined)).toBeUndefined();
  });

  it('for a store that needs it: refuses each use without a key, saying what cannot be done', () => {
    const without = requiredSecretBox(undefined, 'the vault cannot encrypt or decrypt secrets');
    expect(() => without()).toThrow('SECRETS_KEY is not set: the vault cannot encrypt or decrypt secrets');
    const withKey = requiredSecretBox(key.toString('base64'), 'unused');
    expect(withKey().open(withKey().seal('value', 'r'), 'r')).toBe('value');
  });
});
