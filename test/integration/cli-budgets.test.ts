import { cliUser } from '../helpers/cli-runner';
import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

/**
 * A person's CLI and an organisation's scripts on the compatibility API do not share a budget: the CLI deploys,
 * follows, reads and destroys through the platform API, so a spent compat budget refuses none of it.
 */
describe('slipway on the platform API while the compatibility budgets are spent', () => {
  let h: Harness;
  let token: string;
  let hello: string;
  const { slipway } = cliUser(() => ({ baseUrl: h.baseUrl, token }));

  beforeAll(async () => {
    h = await startHarness('clibudgets', {
      RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '1',
      RATE_LIMIT_COMPAT_READS_PER_MIN: '1',
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
    });
    token = (await h.newOrg('pro')).token;
    hello = await buildFixtureImage(h.docker, 'hello');
  }, 300_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('deploy --wait, status, logs and destroy all answer while compat writes and reads answer 429', async () => {
    const api = client(h, token);
    const nobody = '00000000-0000-4000-8000-000000000000';
    // The hour's one compat write and the minute's one compat read, spent as a script would spend them.
    expect((await api.del(`/compat/deployments/${nobody}`)).status).toBe(404);
    expect((await api.del(`/compat/deployments/${nobody}`)).status).toBe(429);
    expect((await api.get('/compat/deployments')).status).toBe(200);
    expect((await api.get('/compat/deployments')).status).toBe(429);

    const deployed = await slipway(['deploy', '--image', hello, '--name', 'cli-budget', '--wait', '--json']);
    expect(deployed.stderr).not.toContain('RATE_LIMIT');
    expect(deployed.code).toBe(0);
    const { id, status } = JSON.parse(deployed.stdout) as { id: string; status: string };
    expect(status).toBe('running');

    const read = await slipway(['status', id, '--json']);
    expect(JSON.parse(read.stdout)).toMatchObject({ id, status: 'running', name: 'cli-budget' });
    const logs = await slipway(['logs', id, '--json']);
    expect(JSON.parse(logs.stdout)).toMatchObject({ deploymentId: id, lines: expect.any(Array) });

    const destroyed = await slipway(['destroy', id, '--yes', '--json']);
    expect(destroyed.stderr).toBe('');
    expect(JSON.parse(destroyed.stdout)).toEqual({ id, name: 'cli-budget', destroyed: true });
    expect((await api.get(`/platform/deployments/${id}`)).status).toBe(404);
  });
});
