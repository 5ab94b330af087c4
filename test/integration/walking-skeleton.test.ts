import { LABELS } from '../../shared/constants';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

// The wiring end to end on real services: HTTP → Temporal workflow → worker activities → MongoDB + Docker.
describe('walking skeleton (real Temporal dev server, FerretDB, Docker Engine)', () => {
  let h: Harness;
  let image: string;

  beforeAll(async () => {
    h = await startHarness('skeleton');
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(() => h?.stop());

  it('deploys a locally built image to a container that answers HTTP, then destroys it', async () => {
    const { token, orgId } = await h.newOrg();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };

    const accepted = await fetch(`${h.baseUrl}/compat/deploy`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ image, name: 'hello', port: 8080, envVars: { GREETING: 'hi' } }),
    });
    expect(accepted.status).toBe(202);
    const { deploymentId, status } = (await accepted.json()) as { deploymentId: string; status: string };
    expect(status).toBe('queued');

    const running = await eventually(async () => {
      const res = await fetch(`${h.baseUrl}/compat/deployments/${deploymentId}`, { headers: auth });
      const body = (await res.json()) as { status: string; url: string | null; error?: { message: string } };
      if (body.status === 'failed') throw new Error(`deploy failed: ${body.error?.message}`);
      return body.status === 'running' ? body : undefined;
    }, 'the deployment to be running');

    const page = await fetch(running.url!);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe('hello from slipway\n');

    const record = await h.db.collection('deployments').findOne({ _id: deploymentId as never });
    expect(record).toMatchObject({ orgId, status: 'running', source: { type: 'image', image } });
    expect((record!.events as { status: string }[]).map((e) => e.status)).toEqual([
      'queued',
      'deploying',
      'deploying',
      'running',
    ]);

    const containers = await h.docker.listContainers({
      filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] },
    });
    expect(containers).toHaveLength(1);
    expect(containers[0]!.Labels[LABELS.orgId]).toBe(orgId);

    const history = await h.temporal.workflow.getHandle(`deployment/${deploymentId}`).fetchHistory();
    expect(history.events?.length).toBeGreaterThan(5);

    const destroyed = await fetch(`${h.baseUrl}/compat/deployments/${deploymentId}`, {
      method: 'DELETE',
      headers: auth,
    });
    expect(destroyed.status).toBe(204);
    const gone = await fetch(`${h.baseUrl}/compat/deployments/${deploymentId}`, { headers: auth });
    expect(gone.status).toBe(404);
    expect(await gone.json()).toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND' });

    await eventually(async () => {
      const left = await h.docker.listContainers({
        all: true,
        filters: { label: [`${LABELS.deploymentId}=${deploymentId}`] },
      });
      return left.length === 0 ? true : undefined;
    }, 'the container to be removed');
    await expect(fetch(running.url!)).rejects.toThrow();
  });

  it('runs two deploys of one organisation at once on its single bridge network', async () => {
    const { token, orgId } = await h.newOrg();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const ids = await Promise.all(
      ['one', 'two'].map(async (name) => {
        const res = await fetch(`${h.baseUrl}/compat/deploy`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ image, name }),
        });
        expect(res.status).toBe(202);
        return ((await res.json()) as { deploymentId: string }).deploymentId;
      }),
    );
    for (const id of ids) {
      await eventually(async () => {
        const body = (await (await fetch(`${h.baseUrl}/compat/deployments/${id}`, { headers: auth })).json()) as {
          status: string;
        };
        if (body.status === 'failed') throw new Error(JSON.stringify(body));
        return body.status === 'running' ? body : undefined;
      }, `deployment ${id} to be running`);
    }
    const networks = (await h.docker.listNetworks()).filter((n) => n.Name === `slipway-org-${orgId}`);
    expect(networks).toHaveLength(1);
    for (const id of ids) {
      expect((await fetch(`${h.baseUrl}/compat/deployments/${id}`, { method: 'DELETE', headers: auth })).status).toBe(
        204,
      );
    }
  });
});
