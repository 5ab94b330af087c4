import { createHmac } from 'node:crypto';

import {
  readPush,
  verifyDelivery,
  verifyGeneric,
  verifyGitea,
  verifyGithub,
  verifyGitlab,
} from '@shared/git-bindings/signatures';

const SECRET = "It's a Secret to Everybody";
const BODY = Buffer.from('Hello, World!');
// GitHub's documented example ("Validating webhook deliveries").
const GITHUB_SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
const SHA = 'a'.repeat(40);

describe('webhook signature verifiers', () => {
  it('GitHub: the documented vector passes; a changed body, secret or prefix fails', () => {
    expect(verifyGithub({ 'x-hub-signature-256': GITHUB_SIGNATURE }, BODY, SECRET)).toBe(true);
    expect(
      verifyGithub({ 'x-hub-signature-256': GITHUB_SIGNATURE.toUpperCase().replace('SHA256', 'sha256') }, BODY, SECRET),
    ).toBe(true);
    expect(verifyGithub({ 'x-hub-signature-256': GITHUB_SIGNATURE }, Buffer.from('Hello, World?'), SECRET)).toBe(false);
    expect(verifyGithub({ 'x-hub-signature-256': GITHUB_SIGNATURE }, BODY, 'another secret')).toBe(false);
    expect(verifyGithub({ 'x-hub-signature-256': GITHUB_SIGNATURE.slice(7) }, BODY, SECRET)).toBe(false);
    expect(verifyGithub({ 'x-hub-signature-256': 'sha256=00' }, BODY, SECRET)).toBe(false);
    expect(verifyGithub({}, BODY, SECRET)).toBe(false);
  });

  it('Gitea: the bare hex HMAC of the body (the same vector without the prefix)', () => {
    expect(verifyGitea({ 'x-gitea-signature': GITHUB_SIGNATURE.slice(7) }, BODY, SECRET)).toBe(true);
    expect(verifyGitea({ 'x-gitea-signature': GITHUB_SIGNATURE }, BODY, SECRET)).toBe(false);
    expect(verifyGitea({ 'x-gitea-signature': GITHUB_SIGNATURE.slice(7) }, BODY, 'nope')).toBe(false);
  });

  it('GitLab: the secret itself, compared whatever its length', () => {
    expect(verifyGitlab({ 'x-gitlab-token': SECRET }, BODY, SECRET)).toBe(true);
    expect(verifyGitlab({ 'x-gitlab-token': SECRET.slice(1) }, BODY, SECRET)).toBe(false);
    expect(verifyGitlab({ 'x-gitlab-token': `${SECRET}x` }, BODY, SECRET)).toBe(false);
    expect(verifyGitlab({}, BODY, SECRET)).toBe(false);
  });

  it('generic: the HMAC of "<timestamp>.<body>", within five minutes of our clock', () => {
    const now = 1_700_000_000_000;
    const ts = String(now / 1000);
    const sign = (t: string, body: Buffer) =>
      `sha256=${createHmac('sha256', SECRET).update(`${t}.`).update(body).digest('hex')}`;
    const h = (t: string, sig = sign(t, BODY)) => ({ 'x-slipway-timestamp': t, 'x-slipway-signature': sig });
    expect(verifyGeneric(h(ts), BODY, SECRET, now)).toBe(true);
    expect(verifyGeneric(h(String(now / 1000 - 299)), BODY, SECRET, now)).toBe(true);
    // Too old or too far ahead, though signed.
    expect(verifyGeneric(h(String(now / 1000 - 301)), BODY, SECRET, now)).toBe(false);
    expect(verifyGeneric(h(String(now / 1000 + 301)), BODY, SECRET, now)).toBe(false);
    // The timestamp is signed: moving it breaks the signature.
    expect(verifyGeneric(h(String(now / 1000 + 1), sign(ts, BODY)), BODY, SECRET, now)).toBe(false);
    expect(verifyGeneric(h('soon'), BODY, SECRET, now)).toBe(false);
  });
});

describe('verifyDelivery', () => {
  it('takes the scheme from the headers when the binding names no provider, Gitea before GitHub', () => {
    const sig = GITHUB_SIGNATURE.slice(7);
    const gitea = {
      'x-gitea-signature': sig,
      'x-hub-signature-256': 'sha256=wrong',
      'x-gitea-event': 'push',
      'x-gitea-delivery': 'd1',
    };
    expect(verifyDelivery(gitea, BODY, SECRET, null)).toEqual({
      ok: true,
      provider: 'gitea',
      event: 'push',
      deliveryId: 'd1',
    });
    const gitlab = { 'x-gitlab-token': SECRET, 'x-gitlab-event': 'Push Hook', 'idempotency-key': 'k' };
    expect(verifyDelivery(gitlab, BODY, SECRET, null)).toEqual({
      ok: true,
      provider: 'gitlab',
      event: 'push',
      deliveryId: 'k',
    });
    expect(verifyDelivery({}, BODY, SECRET, null)).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^unsigned/),
    });
  });

  it("holds a delivery to the connection's provider: another scheme's headers are unsigned", () => {
    const github = { 'x-hub-signature-256': GITHUB_SIGNATURE, 'x-github-event': 'ping', 'x-github-delivery': 'g' };
    expect(verifyDelivery(github, BODY, SECRET, 'github')).toMatchObject({ ok: true, event: 'ping' });
    expect(verifyDelivery(github, BODY, SECRET, 'gitlab')).toMatchObject({
      ok: false,
      reason: 'unsigned: no x-gitlab-token header',
    });
    expect(verifyDelivery(github, BODY, 'x', 'github')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^bad signature/),
    });
  });
});

describe('readPush', () => {
  const push = (b: unknown) => Buffer.from(JSON.stringify(b));
  it('reads the ref and the commit in after (GitLab: checkout_sha)', () => {
    expect(readPush('github', push({ ref: 'refs/heads/main', after: SHA }))).toEqual({
      kind: 'push',
      ref: 'refs/heads/main',
      commit: SHA,
    });
    const other = 'b'.repeat(40);
    expect(readPush('gitlab', push({ ref: 'refs/heads/main', after: SHA, checkout_sha: other }))).toMatchObject({
      commit: other,
    });
  });

  it('calls a deleted branch a deletion, and an unreadable payload malformed', () => {
    expect(readPush('github', push({ ref: 'refs/heads/x', after: '0'.repeat(40), deleted: true }))).toEqual({
      kind: 'deletion',
      ref: 'refs/heads/x',
    });
    expect(readPush('gitlab', push({ ref: 'refs/heads/x', after: '0'.repeat(40), checkout_sha: null }))).toMatchObject({
      kind: 'deletion',
    });
    expect(readPush('github', Buffer.from('nope'))).toMatchObject({ kind: 'malformed', why: 'the body is not JSON' });
    expect(readPush('github', push({ after: SHA }))).toMatchObject({
      kind: 'malformed',
      why: 'the payload has no ref',
    });
    expect(readPush('github', push({ ref: 'refs/heads/main', after: 'abc' }))).toMatchObject({ kind: 'malformed' });
  });
});
