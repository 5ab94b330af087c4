import { csrfMatches, csrfTokenOf } from '@shared/identity/sessions';
import { generateToken } from '@shared/identity/tokens';

describe('console session CSRF tokens', () => {
  it('are derived from the session, differ between sessions and reveal nothing of the secret', () => {
    const a = generateToken();
    const b = generateToken();
    expect(csrfTokenOf(a)).toBe(csrfTokenOf(a));
    expect(csrfTokenOf(a)).not.toBe(csrfTokenOf(b));
    expect(csrfTokenOf(a)).not.toContain(a.slice(4, 12));
    expect(csrfTokenOf(a)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('match only the session’s own token, whole', () => {
    const s = generateToken();
    const t = csrfTokenOf(s);
    expect(csrfMatches(s, t)).toBe(true);
    for (const wrong of [undefined, '', t.slice(1), `${t}x`, csrfTokenOf(generateToken()), t.toUpperCase()])
      expect(csrfMatches(s, wrong)).toBe(false);
  });
});
