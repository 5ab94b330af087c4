import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

type Body = Record<string, unknown> & { status?: string; data?: Record<string, unknown> };

/** The organisation's network is shared by its deployments: removing one must not strand another. */
describe('an organisation’s network outlives the destroy of one of its deployments', () => {
  let h: Harness;
  let image: string;

  beforeAll(async () => {
    h = await startHarness('org-network');
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(() => h?.stop());

  it('starts a stopped deployment again after another deployment of the organisation was destroyed', async () => {
    const api = client(h, (await h.newOrg()).token);
    const deploy = async (name: string) => {
      const r = await api.post<Body>('/compat/deploy', { image, name, port: 8080 });
      const id = String(r.body.deploymentId);
      expect((await api.get<Body>(`/compat/deployments/${id}?wait=running&timeout=60`)).body.status).toBe('running');
      return id;
    };
    const command = async (id: string, name: string) => {
      const accepted = await api.post<{ data: { command: { url: string } } }>(`/platform/deployments/${id}/${name}`);
      expect(accepted.status).toBe(202);
      const path = new URL(accepted.body.data.command.url, h.baseUrl).pathname;
      return eventually(async () => {
        const c = (await api.get<{ data: { state: string; message?: string } }>(path)).body.data;
        return c.state === 'running' ? undefined : c;
      }, `${name} to end`);
    };

    const kept = await deploy('kept');
    expect(await command(kept, 'stop')).toMatchObject({ state: 'succeeded' });
    // Destroying the only running deployment leaves the network with no running container, only a stopped one.
    const other = await deploy('other');
    await api.destroyAndWait(other);

    expect(await command(kept, 'start')).toMatchObject({ state: 'succeeded' });
    expect((await api.get<Body>(`/compat/deployments/${kept}`)).body.status).toBe('running');
    await api.destroyAndWait(kept);
  });
});
