import fs from 'node:fs/promises';
import path from 'node:path';

import { cliUser } from '../helpers/cli-runner';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

/** The CLI's account and release commands on the real stack: login's saved token, rollback through the platform. */
describe('slipway login and rollback against the real stack', () => {
  let h: Harness;
  let token: string;
  let orgId: string;
  let hello: string;
  const { slipway, home } = cliUser(() => ({ baseUrl: h.baseUrl, token }));

  beforeAll(async () => {
    h = await startHarness('climanage', {
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
    });
    const org = await h.newOrg('pro');
    token = org.token;
    orgId = org.orgId;
    hello = await buildFixtureImage(h.docker, 'hello');
  }, 300_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('login checks the token, saves it with the URL readable only by the user, and later commands use it', async () => {
    const file = path.join(home(), 'slipway', 'config.json');
    const bad = await slipway(['login', '--url', h.baseUrl, '--token', 'svc_not-a-token'], {
      env: { SLIPWAY_TOKEN: undefined },
    });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${h.baseUrl} refused this token`);
    await expect(fs.stat(file)).rejects.toThrow('ENOENT');

    // The token on stdin (a pipe), as a script would hand it over without putting it in argv.
    const ok = await slipway(['login', '--url', h.baseUrl, '--json'], {
      env: { SLIPWAY_TOKEN: undefined },
      input: `${token}\n`,
    });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      url: h.baseUrl,
      configPath: file,
      org: { id: orgId },
      permissions: expect.arrayContaining(['deployment.create']),
    });
    expect((await fs.stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await fs.readFile(file, 'utf8'))).toEqual({ url: h.baseUrl, token });

    const deployed = await slipway(['deploy', '--image', hello, '--name', 'cli-saved', '--json'], {
      env: { SLIPWAY_TOKEN: undefined, SLIPWAY_URL: undefined },
    });
    expect(deployed.code).toBe(0);
    const id = (JSON.parse(deployed.stdout) as { deployment: { id: string } }).deployment.id;
    const status = await slipway(['status', id, '--json'], {
      env: { SLIPWAY_TOKEN: undefined, SLIPWAY_URL: undefined },
    });
    expect(JSON.parse(status.stdout)).toMatchObject({ id, name: 'cli-saved' });
    // SLIPWAY_TOKEN overrides the saved token.
    const overridden = await slipway(['status', id], { env: { SLIPWAY_TOKEN: 'svc_wrong' } });
    expect(overridden.code).toBe(1);
    expect(overridden.stderr).toMatch(/^slipway: .*access token/);
    expect(overridden.stderr).toContain('log in again with slipway login');
    expect((await slipway(['destroy', id, '--yes'])).code).toBe(0);
  });

  it('rollback --revision --wait goes back to that release and status shows it; an impossible one is refused with why', async () => {
    const first = await slipway([
      'deploy',
      '--image',
      hello,
      '--name',
      'cli-rollback',
      '--env',
      'V=1',
      '--wait',
      '--json',
    ]);
    expect(first.code).toBe(0);
    const id = (JSON.parse(first.stdout) as { id: string }).id;

    // A second release with other env names, through the platform API (the CLI has no redeploy).
    const api = client(h, token);
    type Accepted = { data: { command: { url: string } } };
    const redeploy = await api.post<Accepted>(`/platform/deployments/${id}/redeploy`, { envVars: { V: '2', W: '3' } });
    expect(redeploy.status).toBe(202);
    const commandPath = new URL(redeploy.body.data.command.url, h.baseUrl).pathname;
    await eventually(async () => {
      const c = await api.get<{ data: { state: string } }>(commandPath);
      return c.body.data.state === 'succeeded' ? true : undefined;
    }, 'the redeploy to succeed');
    expect(JSON.parse((await slipway(['status', id, '--json'])).stdout)).toMatchObject({ envVarNames: ['V', 'W'] });

    const r = await slipway(['rollback', id, '--revision', '1', '--wait', '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ state: 'succeeded', outcome: { status: 'running' } });
    const after = JSON.parse((await slipway(['status', id, '--json'])).stdout) as {
      envVarNames: string[];
      releases: { recent: { trigger: string; rollbackOf?: number }[] };
    };
    expect(after.envVarNames).toEqual(['V']);
    expect(after.releases.recent[0]).toMatchObject({ trigger: 'rollback', rollbackOf: 1 });
    expect((await slipway(['status', id])).stdout).toContain('rollback to r1');

    const refused = await slipway(['rollback', id, '--revision', '99']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^slipway: .*99/);
    expect((await slipway(['destroy', id, '--yes'])).code).toBe(0);
  });
});
