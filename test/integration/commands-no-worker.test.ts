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
