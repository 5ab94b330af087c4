import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { cloneRepository } from '@shared/build/git';
import { createSecretStore } from '@shared/secrets/store';
import { createVault, GitSecretRefusedError } from '@shared/secrets/vault';

import { BASE_IMAGES } from '../helpers/base-images';
import { client } from '../helpers/client';
import { type GitServer, startGitServer } from '../helpers/git-server';
import { type Harness, startHarness } from '../helpers/harness';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'sources');
const TOKEN = 'ghp-vault-secret-under-test-91c2';

type Body = Record<string, unknown> & { error?: string; code?: string };
type Api = ReturnType<typeof client>;

/**
 * A vault secret used as a Git token goes only where its owner bound it: to a caller holding secret.use, over
 * https (plain http only where private hosts are allowed, as in these tests), to a host named in the secret, from
 * the deploy's vault environment. Git servers on two loopback addresses record every credential they receive.
 */
describe('Git tokens from the vault', () => {
  let h: Harness;
  let home: GitServer;
  let elsewhere: GitServer;
  let homeRepo: string;
  let elsewhereRepo: string;

  beforeAll(async () => {
    home = await startGitServer();
    elsewhere = await startGitServer({ host: '127.0.0.2' });
    homeRepo = await home.addRepo('acme/private', path.join(FIXTURES, 'dockerfile-app'), { private: { token: TOKEN } });
    elsewhereRepo = await elsewhere.addRepo('evil/collector', path.join(FIXTURES, 'dockerfile-app'), {
      private: { token: 'anything' },
    });
    h = await startHarness('git-secrets', {
      ALLOW_PRIVATE_GIT_HOSTS: 'true',
      BUILD_BASE_IMAGE_STATIC: BASE_IMAGES.static,
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
      RATE_LIMIT_PLATFORM_PER_15MIN: '10000',
    });
  }, 120_000);
  afterAll(async () => {
    await h?.stop();
    await home?.stop();
    await elsewhere?.stop();
  });

  const credentialsSeen = (server: GitServer) => server.requests.filter((r) => r.authorization !== undefined);

  async function secret(api: Api, body: Record<string, unknown>) {
    const r = await api.post<{ data: { id: string; allowedHosts?: string[] } } & Body>('/platform/secrets', {
      name: `git-${Math.random().toString(36).slice(2, 8)}`,
      value: TOKEN,
      ...body,
    });
    expect(r.status).toBe(200);
    return r.body.data;
  }

  const deploy = (api: Api, body: Record<string, unknown>) =>
    api.post<Body & { deploymentId?: string }>('/compat/deploy/source', { name: 'git', port: 8080, ...body });

  it('needs secret.use: a deploy token without it is refused with 403 and the token never leaves the vault', async () => {
    const owner = await h.newOrg('pro');
    const api = client(h, owner.token);
    const s = await secret(api, { allowedHosts: ['127.0.0.1'] });
    const created = await api.post<{ data: { token: string } }>('/platform/tokens', {
      name: 'ci deploys',
      scopes: ['deployment.create', 'deployment.read'],
    });
    expect(created.status).toBe(200);
    const ci = client(h, created.body.data.token);
    const before = home.requests.length;

    const r = await deploy(ci, { repoUrl: homeRepo, gitTokenSecretId: s.id });
    expect([r.status, r.body.code]).toEqual([403, 'INSUFFICIENT_SCOPE']);
    expect(r.body.error).toMatch(/secret\.use/);
    expect(home.requests.slice(before)).toEqual([]);
    expect(await h.db.collection('deployments').countDocuments({ orgId: owner.orgId })).toBe(0);

    // The owner's token carries secret.use: the same deploy goes through, and the token reaches its host only.
    const ok = await deploy(api, { repoUrl: homeRepo, gitTokenSecretId: s.id });
    expect(ok.status).toBe(202);
    const d = await api.waitFor(ok.body.deploymentId!, ['running', 'failed'], 240_000);
    expect(d.status).toBe('running');
    expect(credentialsSeen(home).length).toBeGreaterThan(0);
    expect(JSON.stringify(d)).not.toContain(TOKEN);
  });

  it('goes only to the hosts the secret names: another host is refused and sees no credentials', async () => {
    const owner = await h.newOrg('pro');
    const api = client(h, owner.token);
    const s = await secret(api, { allowedHosts: ['127.0.0.1'] });
    expect(s.allowedHosts).toEqual(['127.0.0.1']);

    const r = await deploy(api, { repoUrl: elsewhereRepo, gitTokenSecretId: s.id });
    expect([r.status, r.body.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(r.body.error).toMatch(/may be sent only to 127\.0\.0\.1, not to 127\.0\.0\.2/);
    // A secret bound to no host goes nowhere.
    const unbound = await secret(api, {});
    const r2 = await deploy(api, { repoUrl: homeRepo, gitTokenSecretId: unbound.id });
    expect(r2.status).toBe(400);
    expect(r2.body.error).toMatch(/not bound to any Git host; store it again with allowedHosts: \["127\.0\.0\.1"\]/);

    // The worker checks again before it opens the value, whatever the api let through.
    const vault = createVault({ store: createSecretStore(h.db), key: h.config.SECRETS_KEY });
    const use = { environment: 'PRODUCTION' as const, allowHttp: true };
    await expect(vault.revealForGit(owner.orgId, s.id, { ...use, url: elsewhereRepo })).rejects.toThrow(
      GitSecretRefusedError,
    );
    await expect(vault.revealForGit(owner.orgId, s.id, { ...use, url: homeRepo })).resolves.toBe(TOKEN);
    expect(credentialsSeen(elsewhere)).toEqual([]);
    expect(elsewhere.requests).toEqual([]);
  });

  it('must come from the vault environment of the deploy (PRODUCTION unless it says otherwise)', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    const staging = await secret(api, { allowedHosts: ['127.0.0.1'], environment: 'STAGING' });
    const r = await deploy(api, { repoUrl: homeRepo, gitTokenSecretId: staging.id });
    expect([r.status, r.body.code]).toEqual([400, 'INVALID_REQUEST']);
    expect(r.body.error).toMatch(/belongs to the STAGING vault environment, not PRODUCTION/);
    const wrong = await deploy(api, {
      repoUrl: homeRepo,
      gitTokenSecretId: staging.id,
      vaultEnvironment: 'DEVELOPMENT',
    });
    expect(wrong.status).toBe(400);
    const ok = await deploy(api, { repoUrl: homeRepo, gitTokenSecretId: staging.id, vaultEnvironment: 'STAGING' });
    expect(ok.status).toBe(202);
    expect((await api.waitFor(ok.body.deploymentId!, ['running', 'failed'], 240_000)).status).toBe('running');
  });

  it('validates allowedHosts as host names', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    for (const allowedHosts of [['https://github.com'], ['*.github.com'], ['github.com:443'], ['github.com/x'], []]) {
      const r = await api.post<Body>('/platform/secrets', { name: 'x', value: 'v', allowedHosts });
      expect(r.status).toBe(400);
      expect(JSON.stringify(r.body)).toMatch(/allowedHosts/);
    }
  });

  it('is sent over https only when private hosts are not allowed', async () => {
    const strict = await startHarness('git-secrets-strict', { ALLOW_PRIVATE_GIT_HOSTS: 'false' }, { worker: false });
    try {
      const api = client(strict, (await strict.newOrg('pro')).token);
      const s = await secret(api, { allowedHosts: ['example.com'] });
      for (const repoUrl of ['http://example.com/acme/app.git', 'git://example.com/acme/app.git']) {
        const r = await deploy(api, { repoUrl, gitTokenSecretId: s.id });
        expect([r.status, r.body.code]).toEqual([400, 'INVALID_REQUEST']);
        expect(r.body.error).toMatch(/a Git token is sent over https:\/\/ only/);
      }
    } finally {
      await strict.stop();
    }
  });
});

describe('cloneRepository pins the checked address', () => {
  let git: GitServer;
  let work: string;
  beforeAll(async () => {
    git = await startGitServer();
    work = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-pin-'));
  });
  afterAll(async () => {
    await git?.stop();
    await fs.rm(work, { recursive: true, force: true });
  });

  const clone = (url: string, lookup: (host: string) => Promise<{ address: string; family: number }[]>, allow = true) =>
    cloneRepository({
      url,
      dest: path.join(work, Math.random().toString(36).slice(2)),
      maxBytes: 10 * 1024 * 1024,
      allowPrivateHosts: allow,
      lookup,
      signal: new AbortController().signal,
      log: () => undefined,
    });

  it('connects to the address the check resolved, not to what DNS says next', async () => {
    const repo = await git.addRepo('acme/pinned', { 'index.html': 'pinned' });
    const port = new URL(repo).port;
    // `.invalid` never resolves (RFC 6761): git can only reach the server through the pinned address.
    const url = `http://git.rebind.invalid:${port}/acme/pinned.git`;
    const { commit } = await clone(url, () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]));
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    // A name with any private address among its answers is refused before git runs.
    const before = git.requests.length;
    await expect(
      clone(
        url,
        () =>
          Promise.resolve([
            { address: '93.184.216.34', family: 4 },
            { address: '127.0.0.1', family: 4 },
          ]),
        false,
      ),
    ).rejects.toThrow(/resolves to 127\.0\.0\.1, a loopback address/);
    expect(git.requests.length).toBe(before);
  });
});
