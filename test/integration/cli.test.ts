import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

const run = promisify(execFile);
const bin = path.resolve(__dirname, '..', '..', 'bin', 'slipway.cjs');

describe('slipway admin CLI (against the real MongoDB protocol)', () => {
  let h: Harness;
  const cli = async (...args: string[]) => {
    const { stdout } = await run(process.execPath, [bin, ...args], {
      // The api's Redis prefix too: a revocation is announced to the api processes there.
      env: { ...process.env, MONGODB_DB: h.config.MONGODB_DB, REDIS_KEY_PREFIX: h.config.REDIS_KEY_PREFIX },
    });
    return JSON.parse(stdout) as Record<string, string>;
  };

  beforeAll(async () => {
    h = await startHarness('cli');
  });
  afterAll(() => h?.stop());

  it('bootstraps an org, adds a user, creates and revokes a token that the API honours', async () => {
    const boot = await cli('admin', 'bootstrap', '--org', 'acme', '--plan', 'free', '--json');
    expect(boot).toEqual({
      orgId: expect.any(String),
      userId: expect.any(String),
      token: expect.stringMatching(/^svc_/),
      expiresAt: expect.any(String),
    });
    const providers = await client(h, boot.token).get<{ providers: { id: string; available: boolean }[] }>(
      '/compat/providers',
    );
    expect(providers.body.providers.filter((p) => p.available).map((p) => p.id)).toEqual(['engine_local']);

    const user = await cli(
      'admin',
      'user',
      'add',
      '--org',
      boot.orgId!,
      '--email',
      'dev@acme.test',
      '--role',
      'developer',
      '--json',
    );
    const token = await cli(
      'admin',
      'token',
      'create',
      '--org',
      boot.orgId!,
      '--user',
      user.userId!,
      '--scopes',
      'deployment.read',
      '--expires-in',
      '1h',
      '--json',
    );
    expect(Date.parse(token.expiresAt!) - Date.now()).toBeLessThanOrEqual(3600_000);
    const api = client(h, token.token);
    expect((await api.get('/compat/deployments')).status).toBe(200);

    await cli('admin', 'token', 'revoke', '--id', token.id!, '--json');
    // Announced from the CLI's process: the api, which had the principal cached, drops it within a second.
    const revokedAt = Date.now();
    let code = (await api.get<{ code?: string }>('/compat/deployments')).body.code;
    while (code !== 'INVALID_TOKEN' && Date.now() - revokedAt < 1000)
      code = (await api.get<{ code?: string }>('/compat/deployments')).body.code;
    expect(code).toBe('INVALID_TOKEN');
  });

  it('exits non-zero with one clear line for a bad scope or an unknown organisation', async () => {
    await expect(
      cli('admin', 'token', 'create', '--org', 'o', '--user', 'u', '--scopes', 'root', '--json'),
    ).rejects.toMatchObject({
      stderr: expect.stringMatching(/unknown scope\(s\) root/),
    });
    await expect(
      cli('admin', 'user', 'add', '--org', 'nope', '--email', 'a@b.c', '--role', 'viewer', '--json'),
    ).rejects.toMatchObject({
      stderr: expect.stringMatching(/no organisation nope/),
    });
  });
});
