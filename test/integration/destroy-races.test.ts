import { randomUUID } from 'node:crypto';
import net from 'node:net';

import { Client, Connection } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { NativeConnection, Worker } from '@temporalio/worker';

import type { StartSpec } from '@activities/deployment/legacy';
import { workflowBundlerOptions } from '@shared/aliases';
import { LABELS } from '@shared/constants';
import type { ReconcileReport } from '@shared/contracts/reconcile';
import { createLogStore } from '@shared/deployments/logs-store';
import { createDeploymentStore } from '@shared/deployments/store';
import { createSalesStore } from '@shared/sales/store';
import { createSecretStore } from '@shared/secrets/store';
import { createVault } from '@shared/secrets/vault';
import { createUploadStore } from '@shared/uploads/store';

import { createActivities } from '../../activities';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** A promise and the function that settles it: the ordering a test imposes on the real services. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A loopback port nothing listens on: a Temporal address that refuses every connection. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const activityNames = (events: HistoryEvent[]) =>
  events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean);

// Each way a destroy could leave a container running with no record, provoked on the real stack.
describe('destroy races: nothing outlives a destroy', () => {
  let h: Harness;
  let image: string;

  beforeAll(async () => {
    // No grace: the reconciler runs are explicit here, and every deployment they may judge is this file's.
    h = await startHarness('races', { RECONCILE_GRACE_S: '0', RATE_LIMIT_COMPAT_READS_PER_MIN: '100000' });
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(() => h?.stop());

  const containersOf = async (id: string) =>
    h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } });
  const reconcile = () =>
    h.temporal.workflow.execute('reconcileWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `reconcile-test-${randomUUID()}`,
    }) as Promise<ReconcileReport>;
  const deployRunning = async (token: string, name: string) => {
    const api = client(h, token);
    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name, port: 8080 });
    expect(accepted.status).toBe(202);
    await api.waitFor(accepted.body.deploymentId, ['running']);
    expect(await containersOf(accepted.body.deploymentId)).toHaveLength(1);
    return accepted.body.deploymentId;
  };

  it('a DELETE that lands between the record insert and the workflow start: the workflow starts into its destroy', async () => {
    const { token, orgId } = await h.newOrg();
    // An api whose workflow starts wait until the test lets them go: its create stops right after the insert.
    const startReached = latch();
    const startReleased = latch();
    const held = new Client({
      connection: h.temporal.connection,
      namespace: h.config.TEMPORAL_NAMESPACE,
      interceptors: {
        workflow: [
          {
            async start(input, next) {
              startReached.open();
              await startReleased.opened;
              return next(input);
            },
          },
        ],
      },
    });
    const slowApi = await h.secondApi({ temporal: held });
    const name = `overtaken-${randomUUID().slice(0, 8)}`;
    const creating = fetch(`${slowApi}/compat/deploy`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ image, name, port: 8080 }),
    });
    await startReached.opened;
    const record = await h.db.collection('deployments').findOne({ orgId, name });
    expect(record).toMatchObject({ status: 'queued' });
    const id = String(record!._id);

    expect((await client(h, token).del(`/compat/deployments/${id}`)).status).toBe(204);
    startReleased.open();
    expect((await creating).status).toBe(202);

    // Wait for the outcome either way: the workflow ended (the fix) or a container appeared (the race lost).
    const workflow = h.temporal.workflow.getHandle(`deployment/${id}`);
    await eventually(
      async () =>
        (await workflow.describe()).status.name === 'COMPLETED' || (await containersOf(id)).length > 0
          ? true
          : undefined,
      'the workflow to end or a container to appear',
    );
    expect(await containersOf(id)).toHaveLength(0);
    expect(activityNames((await workflow.fetchHistory()).events ?? [])).toEqual(['removeDeployment']);
    expect((await client(h, token).get(`/compat/deployments/${id}`)).status).toBe(404);
  });

  it('a DELETE whose signal cannot reach Temporal after the record is hidden: the reconciler finishes it', async () => {
    const { token } = await h.newOrg();
    const id = await deployRunning(token, 'unsignalled');
    // Temporal refuses every connection of this api: its destroy cannot tell the workflow.
    const unreachable = new Client({ connection: Connection.lazy({ address: `127.0.0.1:${await closedPort()}` }) });
    const cutOff = await h.secondApi({ temporal: unreachable });
    const deleted = await fetch(`${cutOff}/compat/deployments/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    // The intent is durable and the record hidden: the destroy is accepted, whatever Temporal does.
    expect(deleted.status).toBe(204);
    expect((await client(h, token).get(`/compat/deployments/${id}`)).status).toBe(404);
    const intent = await h.db.collection('deployment_destroys').findOne({ _id: id as never });
    expect(intent).toMatchObject({ orgId: expect.any(String), requestedAt: expect.any(Date) });

    const report = await reconcile();
    expect(report.signalled).toBeGreaterThanOrEqual(1);
    // The workflow heard its destroy from the reconciler and removed what was left.
    await h.temporal.workflow.getHandle(`deployment/${id}`).result();
    expect(await containersOf(id)).toHaveLength(0);
  });

  it('a destroy whose api stopped right after writing its intent: the reconciler hides the record and removes it', async () => {
    const { token, orgId, userId } = await h.newOrg();
    const id = await deployRunning(token, 'half-destroyed');
    // What an api leaves when it dies after its first write: the intent, nothing else (record visible, no signal).
    const store = createDeploymentStore(h.db);
    expect(await store.recordDestroyIntent({ _id: id, orgId, requestedBy: userId, requestedAt: new Date() })).toBe(
      true,
    );
    expect((await client(h, token).get(`/compat/deployments/${id}`)).status).toBe(200);

    const report = await reconcile();
    expect(report.hidden).toBeGreaterThanOrEqual(1);
    expect((await client(h, token).get(`/compat/deployments/${id}`)).status).toBe(404);
    await h.temporal.workflow.getHandle(`deployment/${id}`).result();
    expect(await containersOf(id)).toHaveLength(0);
  });

  it('a status write racing the hide of a destroy does not bring the deployment back', async () => {
    const { orgId, userId } = await h.newOrg();
    const store = createDeploymentStore(h.db);
    // The api's destroy (intent, then hide) while the worker writes a status, each pair at once. FerretDB updates
    // are read, modify, write of the whole document: without a repair, most hides are lost to the status write.
    const ids = await Promise.all(
      Array.from({ length: 30 }, async (_, i) => {
        const id = randomUUID();
        const at = new Date();
        await store.insert({
          _id: id,
          orgId,
          createdBy: userId,
          origin: 'compat',
          name: `raced-${i}`,
          provider: 'engine_local',
          source: { type: 'image', image },
          port: 8080,
          revision: 1,
          status: 'queued',
          version: 1,
          events: [{ status: 'queued', message: 'accepted', at }],
          createdAt: at,
          updatedAt: at,
        });
        return id;
      }),
    );
    for (const id of ids)
      await Promise.all([
        store
          .recordDestroyIntent({ _id: id, orgId, requestedBy: userId, requestedAt: new Date() })
          .then(() => store.markDestroyed(orgId, id)),
        store.recordStatus({ deploymentId: id, version: 2, status: 'deploying', message: 'starting' }),
      ]);
    const visible = (await Promise.all(ids.map((id) => store.get(orgId, id)))).filter(Boolean);
    expect(visible.map((d) => d!._id)).toEqual([]);
  });
});

// A destroy that cancels startContainer before the engine has made the container.
describe('destroy races: a destroy during the container start', () => {
  let h: Harness;
  let worker: Worker;
  let running: Promise<void>;
  let workerConnection: NativeConnection;
  const startEntered = latch();
  const startReleased = latch();
  const startFinished = latch();

  beforeAll(async () => {
    h = await startHarness('races-start', {}, { worker: false });
    const image = await buildFixtureImage(h.docker, 'hello');
    expect(image).toBeTruthy();
    workerConnection = await NativeConnection.connect({ address: h.config.TEMPORAL_ADDRESS });
    const db = h.db;
    const real = createActivities({
      store: createDeploymentStore(db),
      logs: createLogStore(db),
      sales: createSalesStore(db),
      allowPrivateWebhookTargets: false,
      engine: { docker: h.docker, publicHost: h.config.ENGINE_PUBLIC_HOST, bindIp: h.config.ENGINE_BIND_IP },
      s3: h.s3,
      uploads: createUploadStore(db),
      vault: createVault({ store: createSecretStore(db), key: h.config.SECRETS_KEY }),
      config: h.config,
    });
    worker = await Worker.create({
      connection: workerConnection,
      namespace: h.config.TEMPORAL_NAMESPACE,
      taskQueue: h.taskQueue,
      workflowsPath: require.resolve('../../workflows'),
      bundlerOptions: workflowBundlerOptions,
      activities: {
        ...real,
        // The real start, held at its first line until the test has destroyed the deployment.
        async startContainer(spec: StartSpec) {
          startEntered.open();
          await startReleased.opened;
          try {
            return await real.startContainer(spec);
          } finally {
            startFinished.open();
          }
        },
        // The same for deployments started as releases (workflows/deployment/first-deploy.ts).
        async startInstance(spec: Parameters<typeof real.startInstance>[0]) {
          startEntered.open();
          await startReleased.opened;
          try {
            return await real.startInstance(spec);
          } finally {
            startFinished.open();
          }
        },
      },
    });
    running = worker.run();
  });
  afterAll(async () => {
    startReleased.open();
    worker?.shutdown();
    await running;
    await workerConnection?.close();
    await h?.stop();
  });

  it('waits for the start to really end, then removes the container it made', async () => {
    const { token } = await h.newOrg();
    const api = client(h, token);
    const image = await buildFixtureImage(h.docker, 'hello');
    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', {
      image,
      name: 'mid-start',
      port: 8080,
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.deploymentId;
    const containersOf = () =>
      h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } });

    await startEntered.opened;
    expect(await containersOf()).toHaveLength(0);
    expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    const workflow = h.temporal.workflow.getHandle(`deployment/${id}`);
    await eventually(async () => {
      const events = (await workflow.fetchHistory()).events ?? [];
      return events.some((e) => e.activityTaskCancelRequestedEventAttributes) ? true : undefined;
    }, 'the start to be cancelled');

    // Were the workflow to move on without waiting for the start to end (the defect), its removal comes in the
    // same step as the cancel: let that removal finish first, and the container made afterwards is left behind.
    if (activityNames((await workflow.fetchHistory()).events ?? []).includes('removeDeployment'))
      await workflow.result();
    // The engine makes the container only now, after the destroy cancelled the activity making it.
    startReleased.open();
    await startFinished.opened;
    await workflow.result();
    expect(await containersOf()).toHaveLength(0);
  });
});
