import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

interface Accepted {
  data: { command: { id: string; name: string; url: string } };
}

/**
 * A deployment command is taken by the deployment's workflow only when a worker runs it. With none running (down,
 * restarting, or all busy), the request must still answer: 202 with the command, after a bounded wait.
 */
describe('deployment commands while no worker runs', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness('nowork', { DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS: '1500' }, { worker: false });
  });
  afterAll(() => h?.stop());

  it('answers 202 with the command to follow instead of holding the request until a worker comes', async () => {
    const { token } = await h.newOrg('pro');
    const api = client(h, token);
    const created = await api.post<{ deploymentId: string }>('/compat/deploy', {
      image: 'nginx:1.27',
      name: 'no-worker',
      port: 8080,
    });
    expect(created.status).toBe(202);
    const id = created.body.deploymentId;
    for (const [path, body] of [
      [`/platform/deployments/${id}/redeploy`, { envVars: { MODE: 'blue' } }],
      [`/platform/deployments/${id}/env`, { set: { MODE: 'green' } }],
      [`/platform/deployments/${id}/stop`, undefined],
    ] as const) {
      const r = await api.call<Accepted>(path.endsWith('/env') ? 'PATCH' : 'POST', path, body ?? {});
      expect([path, r.status]).toEqual([path, 202]);
      expect(r.body.data.command).toMatchObject({ id: expect.any(String), url: expect.stringContaining('/commands/') });
    }
  });
});

describe('deployment commands answered at the end of a short wait', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(
      'nowork-short',
      { DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS: '100', RATE_LIMIT_PLATFORM_PER_15MIN: '100000' },
      { worker: false },
    );
  });
  afterAll(() => h?.stop());

  it('answers 202 however the wait ends, never 500', async () => {
    // A wait that ends while the update call is in flight comes back CANCELLED, not DEADLINE_EXCEEDED: 2 of 80 such
    // requests were answered 500 before. Pairs at once make the ending land at every point of the call.
    const api = client(h, (await h.newOrg('pro')).token);
    const created = await api.post<{ deploymentId: string }>('/compat/deploy', {
      image: 'nginx:1.27',
      name: 'short-wait',
      port: 8080,
    });
    const id = created.body.deploymentId;
    const statuses: Record<number, number> = {};
    for (let i = 0; i < 60; i++) {
      const answers = await Promise.all([
        api.call('POST', `/platform/deployments/${id}/stop`, {}),
        api.call('PATCH', `/platform/deployments/${id}/env`, { set: { A: String(i) } }),
      ]);
      for (const r of answers) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
    }
    expect(statuses).toEqual({ 202: 120 });
  }, 300_000);
});
