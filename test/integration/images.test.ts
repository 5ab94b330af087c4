import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { MockActivityEnvironment } from '@temporalio/testing';

import { createEngineImages } from '@activities/providers/engine-images';
import { LABELS } from '@shared/constants';
import { deploymentWorkflowId, type DeploymentWorkflowInput } from '@shared/contracts/deployment';
import { createDeploymentStore } from '@shared/deployments/store';
import { PLAN_POLICIES } from '@shared/plans';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage, buildImageOnce } from '../helpers/images';
import { exited, spawnWorker } from '../helpers/worker-process';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'images');

type Failed = { status: string; error?: { code: string; phase: string; message: string } };

describe('image references and image ownership (real worker process, real engine)', () => {
  let h: Harness;
  let worker: ReturnType<typeof spawnWorker>;
  let hello: string;
  const madeImages: string[] = [];

  beforeAll(async () => {
    h = await startHarness(
      'images',
      {
        RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
        RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '100000',
        RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
      },
      { worker: false },
    );
    worker = spawnWorker(h);
    hello = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(async () => {
    if (worker) {
      worker.child.kill('SIGTERM');
      await exited(worker.child);
    }
    for (const image of madeImages)
      await h.docker
        .getImage(image)
        .remove({ force: true })
        .catch(() => undefined);
    await h?.stop();
  });

  /** An image as Slipway's builder makes one for organisation `orgId`: `slipway/<deployment>:1`, org label. */
  async function orgImage(orgId: string, deploymentId = randomUUID()): Promise<string> {
    const tag = `slipway/${deploymentId}:1`;
    await buildImageOnce(h.docker, tag, async (context) => {
      await fs.cp(path.join(FIXTURES, 'hello'), context, { recursive: true });
      await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
      await fs.appendFile(
        path.join(context, 'Dockerfile'),
        `\nLABEL ${LABELS.orgId}="${orgId}" ${LABELS.deploymentId}="${deploymentId}"\n`,
      );
    });
    madeImages.push(tag);
    return tag;
  }

  it('answers a path-like image reference with 400 INVALID_REQUEST naming the problem', async () => {
    const api = client(h, (await h.newOrg()).token);
    const r = await api.post<{ code: string; error: string }>('/compat/deploy', {
      image: '../../../etc/passwd',
      name: 'bad',
      port: 8080,
    });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('INVALID_REQUEST');
    expect(r.body.error).toMatch(/"\.\.\/\.\.\/\.\.\/etc\/passwd" is not a valid image reference/);
  });

  it('refuses image IDs and ID prefixes outright', async () => {
    const api = client(h, (await h.newOrg()).token);
    const id = (await h.docker.getImage(hello).inspect()).Id; // sha256:<64 hex>
    for (const image of [id.slice(7, 15), id.slice(7, 9), id.slice(7), id, `sha256:${id.slice(7, 19)}`]) {
      const r = await api.post<{ code: string; error: string }>('/compat/deploy', { image, name: 'by-id' });
      expect({ image, status: r.status, code: r.body.code }).toEqual({ image, status: 400, code: 'INVALID_REQUEST' });
      expect(r.body.error).toMatch(/image IDs and ID prefixes are not accepted/);
    }
  });

  it('refuses registries on loopback, private and metadata addresses (the engine would contact them)', async () => {
    const api = client(h, (await h.newOrg()).token);
    for (const image of ['127.0.0.1:8233/api:1', 'localhost:7243/x', '169.254.169.254/latest:1', '10.1.2.3:5000/a']) {
      const r = await api.post<{ code: string; error: string }>('/compat/deploy', { image, name: 'private' });
      expect({ image, status: r.status }).toEqual({ image, status: 400 });
      expect(r.body.error).toMatch(/images from the registry .* are refused/);
    }
  });

  it('answers a registry whose name resolves nowhere as one that cannot be reached, not as a private one', async () => {
    const api = client(h, (await h.newOrg()).token);
    const r = await api.post<{ code: string; error: string }>('/compat/deploy', {
      image: 'slipway-none.invalid/app:1',
      name: 'nowhere',
    });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(
      /the registry slipway-none\.invalid could not be reached \(its host name does not resolve\)/,
    );
    expect(r.body.error).not.toMatch(/refused|public registries/);
  });

  it("treats another organisation's image as not found, exactly as an absent one, and runs it for its owner", async () => {
    const owner = await h.newOrg();
    const other = client(h, (await h.newOrg()).token);
    const image = await orgImage(owner.orgId);

    const stolen = await other.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'stolen', port: 8080 });
    expect(stolen.status).toBe(202);
    const absentImage = `slipway/${randomUUID()}:1`;
    const absent = await other.post<{ deploymentId: string }>('/compat/deploy', { image: absentImage, name: 'absent' });
    const [s, a] = (await Promise.all([
      other.waitFor(stolen.body.deploymentId, ['failed', 'running']),
      other.waitFor(absent.body.deploymentId, ['failed', 'running']),
    ])) as Failed[];
    expect(s!.status).toBe('failed');
    expect(s!.error!.message).toMatch(/was not found/);
    // Nothing tells the two apart: same phase, same words but for the name asked for.
    expect(s!.error!.phase).toBe(a!.error!.phase);
    expect(s!.error!.message.replace(`docker.io/${image}`, 'X')).toBe(
      a!.error!.message.replace(`docker.io/${absentImage}`, 'X'),
    );
    const containers = await h.docker.listContainers({
      all: true,
      filters: { label: [`${LABELS.deploymentId}=${stolen.body.deploymentId}`] },
    });
    expect(containers).toHaveLength(0);

    const mine = client(h, owner.token);
    const own = await mine.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'own', port: 8080 });
    expect((await mine.waitFor(own.body.deploymentId, ['running', 'failed'])).status).toBe('running');
    await mine.destroyAndWait(own.body.deploymentId);
  });

  it('fails a deploy whose workflow carries a bad reference past the api, and the worker keeps running', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const store = createDeploymentStore(h.db);
    const ownerOfHidden = await h.newOrg();
    const hiddenId = (await h.docker.getImage(await orgImage(ownerOfHidden.orgId)).inspect()).Id;
    // Straight to Temporal, as a workflow started by older code or by hand would be: nothing validated it.
    const startBypassingApi = async (image: string) => {
      const id = randomUUID();
      const now = new Date();
      await store.insert({
        _id: id,
        orgId: org.orgId,
        createdBy: org.userId,
        origin: 'compat',
        name: 'bypass',
        provider: 'engine_local',
        source: { type: 'image', image },
        port: 8080,
        envVars: {},
        revision: 1,
        status: 'queued',
        version: 1,
        events: [{ status: 'queued', message: 'deployment accepted', at: now }],
        createdAt: now,
        updatedAt: now,
      });
      const input: DeploymentWorkflowInput = {
        deploymentId: id,
        orgId: org.orgId,
        source: { type: 'image', image },
        port: 8080,
        envVars: {},
        revision: 1,
        limits: PLAN_POLICIES.pro.limits,
        readyTimeoutS: 10,
        version: 1,
      };
      await h.temporal.workflow.start('deploymentWorkflow', {
        taskQueue: h.taskQueue,
        workflowId: deploymentWorkflowId(id),
        args: [input],
      });
      return id;
    };

    const traversal = await startBypassingApi('../../../etc/passwd');
    const prefix = await startBypassingApi(hiddenId.slice(7, 15));
    const foreign = await startBypassingApi(hiddenId);
    for (const [id, message] of [
      [traversal, /"\.\.\/\.\.\/\.\.\/etc\/passwd" is not a valid image reference/],
      [prefix, /image IDs and ID prefixes are not accepted/],
      [foreign, /image IDs and ID prefixes are not accepted/],
    ] as const) {
      const d = (await api.waitFor(id, ['failed', 'running'])) as Failed;
      expect(d.status).toBe('failed');
      expect(d.error).toMatchObject({
        code: 'DEPLOYMENT_FAILED',
        phase: 'pull',
        message: expect.stringMatching(message),
      });
    }
    expect(worker.child.exitCode).toBeNull();
    expect(worker.child.signalCode).toBeNull();
    // Fixed where it happened, not merely survived: nothing escaped to the process-level handler.
    expect(worker.output()).not.toMatch(/escaped every handler|ENOTFOUND/);

    // The same worker process still deploys.
    const ok = await api.post<{ deploymentId: string }>('/compat/deploy', { image: hello, name: 'after', port: 8080 });
    expect((await api.waitFor(ok.body.deploymentId, ['running', 'failed'])).status).toBe('running');
    await api.destroyAndWait(ok.body.deploymentId);
  });

  it('lets a workflow started before the org was passed use its own build, and no other org’s', async () => {
    const engine = createEngineImages({ docker: h.docker, allowPrivateRegistries: false });
    const deploymentId = randomUUID();
    const own = await orgImage((await h.newOrg()).orgId, deploymentId);
    const foreign = await orgImage((await h.newOrg()).orgId);
    // As older workflow code calls it: the image alone, from the workflow deployment/<deploymentId>.
    const asLegacyWorkflow = new MockActivityEnvironment({
      workflowExecution: { workflowId: deploymentWorkflowId(deploymentId), runId: randomUUID() },
    });
    await expect(asLegacyWorkflow.run(engine.ensureImage, own)).resolves.toEqual({ pulled: false });
    await expect(asLegacyWorkflow.run(engine.ensureImage, foreign)).rejects.toMatchObject({
      type: 'ImageNotFound',
      nonRetryable: true,
    });
  });
});
