import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';

import type Docker from 'dockerode';
import { request } from 'undici';

import { LABELS } from '@shared/constants';
import { deploymentHost } from '@shared/edge';
import { instanceId } from '@shared/instance';

import { client } from '../helpers/client';
import { edgeAgent, edgeGet } from '../helpers/edge';
import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage, buildImageOnce } from '../helpers/images';
import { runReconcileSchedule } from '../helpers/reconcile';

// The reconciler removes what destroyed or unknown deployments left, and only this instance's.
describe('reconciler schedule', () => {
  const instance = `reconciler-${process.pid}-${randomUUID().slice(0, 8)}`;
  let h: Harness;
  /** The same instance with a long grace: it judges the same objects but must leave young ones alone. */
  let patient: Harness;
  let image: string;
  const made: { kind: 'container' | 'network' | 'image'; id: string }[] = [];

  beforeAll(async () => {
    h = await startHarness('reconciler', { SLIPWAY_INSTANCE: instance, RECONCILE_GRACE_S: '0' });
    patient = await startHarness('reconciler-patient', { SLIPWAY_INSTANCE: instance, RECONCILE_GRACE_S: '3600' });
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(async () => {
    for (const m of made) {
      if (m.kind === 'container')
        await h.docker
          .getContainer(m.id)
          .remove({ force: true })
          .catch(() => undefined);
      if (m.kind === 'network')
        await h.docker
          .getNetwork(m.id)
          .remove()
          .catch(() => undefined);
      if (m.kind === 'image')
        await h.docker
          .getImage(m.id)
          .remove({ force: true })
          .catch(() => undefined);
    }
    await patient?.stop();
    await h?.stop();
  });

  /** A running container labelled as Slipway labels a deployment's, as a crashed worker or a lost destroy leaves it. */
  async function leftover(labels: Record<string, string>): Promise<Docker.Container> {
    const container = await h.docker.createContainer({
      name: `slipway-leftover-${randomUUID()}`,
      Image: image,
      Labels: { [LABELS.managed]: 'true', [LABELS.revision]: '1', ...labels },
    });
    made.push({ kind: 'container', id: container.id });
    await container.start();
    return container;
  }
  const exists = (c: Docker.Container) =>
    c.inspect().then(
      () => true,
      () => false,
    );

  it('removes containers, images and networks of destroyed and unknown deployments, counting each, and nothing else', async () => {
    const { token, orgId } = await h.newOrg();
    expect(instanceId(h.config)).toBe(instance);

    // A live deployment, deployed for real: its container and network stay.
    const api = client(h, token);
    const live = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'live', port: 8080 });
    expect(live.status).toBe(202);
    await api.waitFor(live.body.deploymentId, ['running']);
    const [liveContainer] = await h.docker.listContainers({
      filters: { label: [`${LABELS.deploymentId}=${live.body.deploymentId}`] },
    });
    expect(liveContainer?.Labels[LABELS.instance]).toBe(instance);

    // A deployment this database has never heard of.
    const unknownId = randomUUID();
    const unknown = await leftover({
      [LABELS.deploymentId]: unknownId,
      [LABELS.orgId]: orgId,
      [LABELS.instance]: instance,
    });
    // A destroyed deployment whose container outlived it.
    const destroyedId = randomUUID();
    const now = new Date();
    await h.db.collection('deployments').insertOne({
      _id: destroyedId as never,
      orgId,
      name: 'gone',
      status: 'running',
      createdAt: now,
      updatedAt: now,
      destroyedAt: now,
    });
    const destroyed = await leftover({
      [LABELS.deploymentId]: destroyedId,
      [LABELS.orgId]: orgId,
      [LABELS.instance]: instance,
    });
    // Another Slipway instance's container on the same engine: unknown here, but not ours to judge.
    const foreign = await leftover({
      [LABELS.deploymentId]: randomUUID(),
      [LABELS.orgId]: orgId,
      [LABELS.instance]: `someone-else-${randomUUID()}`,
    });
    // A built image of an unknown deployment.
    const builtTag = `slipway/${randomUUID()}:1`;
    const unknownImageDeployment = randomUUID();
    await buildImageOnce(h.docker, builtTag, async (context) => {
      await fs.writeFile(
        `${context}/Dockerfile`,
        `FROM ${image}\nLABEL "${LABELS.managed}"="true" "${LABELS.deploymentId}"="${unknownImageDeployment}" "${LABELS.instance}"="${instance}"\n`,
      );
    });
    const builtId = (await h.docker.getImage(builtTag).inspect()).Id;
    made.push({ kind: 'image', id: builtId });
    // An org network nothing uses any more, and another instance's.
    const idleOrg = randomUUID();
    const idle = await h.docker.createNetwork({
      Name: `slipway-org-${idleOrg}`,
      Labels: { [LABELS.managed]: 'true', [LABELS.orgId]: idleOrg, [LABELS.instance]: instance },
    });
    made.push({ kind: 'network', id: idle.id });
    const foreignNet = await h.docker.createNetwork({
      Name: `slipway-org-${randomUUID()}`,
      Labels: { [LABELS.managed]: 'true', [LABELS.orgId]: randomUUID(), [LABELS.instance]: 'someone-else' },
    });
    made.push({ kind: 'network', id: foreignNet.id });

    // With an hour's grace, everything here is too young to judge.
    const early = await patient.temporal.workflow.execute('reconcileWorkflow', {
      taskQueue: patient.taskQueue,
      workflowId: `reconcile-patient-${randomUUID()}`,
    });
    expect(early).toMatchObject({ containers: 0, images: 0, networks: 0 });
    expect(await exists(unknown)).toBe(true);

    const report = await runReconcileSchedule(h);
    expect(report).toMatchObject({ containers: 2, images: 1, networks: 1 });
    expect(report.removed.map((r) => `${r.kind}:${r.deploymentId ?? r.name}:${r.reason}`).sort()).toEqual(
      [
        `container:${destroyedId}:destroyed`,
        `container:${unknownId}:unknown`,
        `image:${unknownImageDeployment}:unknown`,
        `network:slipway-org-${idleOrg}:unused`,
      ].sort(),
    );
    expect(await exists(unknown)).toBe(false);
    expect(await exists(destroyed)).toBe(false);
    await expect(h.docker.getImage(builtId).inspect()).rejects.toMatchObject({ statusCode: 404 });
    await expect(h.docker.getNetwork(idle.id).inspect()).rejects.toMatchObject({ statusCode: 404 });

    // Untouched: the live deployment (still answering), another instance's container and network.
    expect((await h.docker.getContainer(liveContainer!.Id).inspect()).State.Running).toBe(true);
    expect(await exists(foreign)).toBe(true);
    expect((await h.docker.getNetwork(foreignNet.id).inspect()).Name).toMatch(/^slipway-org-/);
    expect((await api.get(`/compat/deployments/${live.body.deploymentId}`)).body).toMatchObject({ status: 'running' });

    // A second run finds nothing more.
    expect(await runReconcileSchedule(h)).toMatchObject({ containers: 0, images: 0, networks: 0 });
  });

  it('puts back the upstream files and the route the edge router lost for a running deployment, and nothing more', async () => {
    const { token } = await h.newOrg();
    const api = client(h, token);
    const deployed = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'routed', port: 8080 });
    expect(deployed.status).toBe(202);
    const id = deployed.body.deploymentId;
    await api.waitFor(id, ['running']);
    const agent = edgeAgent();
    const host = deploymentHost('routed', id, h.config.EDGE_DOMAIN);
    const through = () => edgeGet(`http://127.0.0.1:${h.config.EDGE_PORT}/`, { host, agent });
    const served = await through();

    // The files are gone (the route answers the stopped page meanwhile), then the whole route is.
    await fs.rm(`${h.config.EDGE_UPSTREAMS_DIR}/${id}`, { recursive: true });
    const withoutFiles = await through();
    const filesBack = await runReconcileSchedule(h);
    const afterFiles = await through();
    const removed = await request(`${process.env.EDGE_ADMIN_URL}/id/slipway-deployment-${id}`, { method: 'DELETE' });
    await removed.body.text();
    const withoutRoute = await through();
    const routeBack = await runReconcileSchedule(h);
    const afterRoute = await through();
    const nothingMore = await runReconcileSchedule(h);
    await agent.close();

    expect(served.status).toBe(200);
    expect(withoutFiles.status).toBe(503);
    expect(filesBack.restored).toMatchObject({ files: 1 });
    expect(afterFiles).toEqual(served);
    expect(removed.statusCode).toBe(200);
    expect(withoutRoute.status).toBe(404);
    expect(routeBack.restored).toMatchObject({ routes: 1 });
    expect(afterRoute).toEqual(served);
    expect(nothingMore.restored).toEqual({ routes: 0, files: 0 });
  });
});
