import { explainCloneFailure, explainPushFailure } from '@shared/build/git';

describe('a failed clone, in our words', () => {
  const url = 'http://127.0.0.1:40195/acme/missing.git';

  it('reads a missing repository as missing, whatever digits the URL’s port holds', () => {
    const stderr = `Cloning into '/tmp/x'...\nfatal: repository '${url}/' not found\n`;
    expect(explainCloneFailure(stderr, { url })).toBe(
      `no repository at ${url} (a private repository also needs gitTokenSecretId)`,
    );
  });

  it('reads a 401 or 403 as credentials needed or refused', () => {
    const stderr = `fatal: unable to access '${url}/': The requested URL returned error: 401\n`;
    expect(explainCloneFailure(stderr, { url })).toMatch(/needs credentials/);
    expect(explainCloneFailure(stderr.replace('401', '403'), { url, token: 't' })).toMatch(/refused the token/);
  });

  it('reads a commit the server does not have as missing, naming it', () => {
    const commit = '1234567890123456789012345678901234567890';
    const stderr = `fatal: remote error: upload-pack: not our ref ${commit}\n`;
    expect(explainCloneFailure(stderr, { url, commit })).toBe(
      `the commit ${commit} is not in ${url} (push it first, or give the full SHA of a commit it has)`,
    );
  });
});

describe('a failed builder push or import, in our words', () => {
  const url = 'http://127.0.0.1:40195/acme/site.git';

  it('does not read the digits of a URL’s port as a refusal of the credentials', () => {
    const out = `To ${url}\n ! [rejected]        main -> main (fetch first)\nerror: failed to push some refs to '${url}'\n`;
    expect(explainPushFailure(url, out)).toBe(`git failed on ${url}: error: failed to push some refs to '${url}'`);
    expect(explainPushFailure(url, `fatal: repository '${url}/' not found\n`)).toBe(`no repository at ${url}`);
  });

  it('reads a 401 or 403 as refused credentials, and a refused connection as one', () => {
    expect(explainPushFailure(url, 'error: The requested URL returned error: 403\n')).toMatch(
      /refused the credentials/,
    );
    expect(explainPushFailure(url, 'fatal: unable to access: Failed to connect to host\n')).toBe(
      `cannot connect to ${url}`,
    );
  });
});
