import { generateToken, hashToken, TOKEN_PATTERN, TOKEN_PREFIX } from '@shared/identity/tokens';

describe('access tokens', () => {
  it('carry the vendor prefix and 43 base62 characters (256 bits)', () => {
    const token = generateToken();
    expect(token.startsWith(TOKEN_PREFIX)).toBe(true);
    expect(token).toMatch(TOKEN_PATTERN);
    expect(token).toHaveLength(4 + 43);
  });

  it('are never the same twice, and use the whole alphabet', () => {
    const tokens = Array.from({ length: 200 }, generateToken);
    expect(new Set(tokens).size).toBe(tokens.length);
    const seen = new Set(tokens.join('').replace(/svc_/g, ''));
    // 8600 draws from 62 characters: missing one by chance has odds of about 62 · (61/62)^8600 ≈ 10^-59.
    expect(seen.size).toBe(62);
  });

  it('are stored as their SHA-256, never as themselves', () => {
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    const token = generateToken();
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(token)).not.toContain(token.slice(4));
    expect(hashToken(token)).not.toBe(hashToken(generateToken()));
  });

  it.each(['svc_short', `svc_${'a'.repeat(44)}`, `sk_${'a'.repeat(43)}`, `svc_${'a'.repeat(42)}-`])(
    'does not take %s for a token',
    (s) => {
      expect(TOKEN_PATTERN.test(s)).toBe(false);
    },
  );
});
