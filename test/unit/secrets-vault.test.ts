import { gitSecretRefusal } from '@shared/secrets/vault';

const secret = { _id: 's1', environment: 'PRODUCTION' as const, allowedHosts: ['github.com', '::1'] };
const use = (url: string, allowHttp = false) => ({ url, environment: 'PRODUCTION' as const, allowHttp });

describe('when a vault secret may go to a Git host', () => {
  it('allows https to a host the secret is bound to, whatever the case of the URL', () => {
    expect(gitSecretRefusal(secret, use('https://github.com/org/repo.git'))).toBeUndefined();
    expect(gitSecretRefusal(secret, use('https://GitHub.com/org/repo.git'))).toBeUndefined();
    expect(gitSecretRefusal(secret, use('https://[::1]:8443/repo.git'))).toBeUndefined();
  });

  it('refuses what is not a URL', () => {
    expect(gitSecretRefusal(secret, use('github.com/org/repo'))).toBe('repoUrl is not a URL');
  });

  it('refuses plain http unless private hosts are allowed, and any other scheme always', () => {
    expect(gitSecretRefusal(secret, use('http://github.com/org/repo'))).toBe(
      "a Git token is sent over https:// only, and repoUrl uses http://; use the repository's https:// URL",
    );
    expect(gitSecretRefusal(secret, use('http://github.com/org/repo', true))).toBeUndefined();
    expect(gitSecretRefusal(secret, use('ssh://github.com/org/repo', true))).toMatch(/repoUrl uses ssh:\/\//);
    expect(gitSecretRefusal(secret, use('file:///etc/passwd', true))).toMatch(/repoUrl uses file:\/\//);
  });

  it('refuses a secret of another vault environment, naming both', () => {
    expect(gitSecretRefusal(secret, { ...use('https://github.com/x'), environment: 'STAGING' })).toBe(
      'the secret s1 belongs to the PRODUCTION vault environment, not STAGING; pass vaultEnvironment "PRODUCTION" or use a STAGING secret',
    );
  });

  it('refuses a secret bound to no host, saying how to bind it', () => {
    for (const allowedHosts of [undefined, []]) {
      expect(gitSecretRefusal({ ...secret, allowedHosts }, use('https://gitlab.com/x'))).toBe(
        'the secret s1 is not bound to any Git host; store it again with allowedHosts: ["gitlab.com"] (POST /platform/secrets)',
      );
    }
  });

  it('refuses a host the secret is not bound to, however close its name', () => {
    for (const url of [
      'https://gitlab.com/x',
      'https://github.com.evil.test/x',
      'https://evil.test/github.com',
      'https://github.com@evil.test/x',
      'https://api.github.com/x',
    ]) {
      expect(gitSecretRefusal(secret, use(url))).toMatch(/^the secret s1 may be sent only to github.com, ::1, not to /);
    }
  });
});
