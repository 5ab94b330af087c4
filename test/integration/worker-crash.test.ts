import type { ChildProcess } from 'node:child_process';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { exited, spawnWorker } from '../helpers/worker-process';

describe('durability: a worker killed mid-deploy', () => {
  let h: Harness;
  let image: string;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    h = await startHarness('crash', { RATE_LIMIT_COMPAT_READS_PER_MIN: '100000' }, { worker: false });
    image = await buildFixtureImage(h.docker, 'slow-hello');
  });
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGTERM');
      await exited(w);
    }
    await h?.stop();
  });

  it('is finished to running by the next worker (SIGKILL, then a fresh worker process)', async () => {
    const api = client(h, (await h.newOrg()).token);
    const first = spawnWorker(h).child;
    workers.push(first);
    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'durable' });
    expect(accepted.status).toBe(202);
    const id = accepted.body.deploymentId;

    // Kill the worker while it waits for the container's port (the app listens only after 6 s).
    await eventually(async () => {
      const d = await api.get<{ events: { message: string }[] }>(`/compat/deployments/${id}`);
      return d.body.events?.some((e) => e.message.includes('waiting for port')) ? true : undefined;
    }, 'the container to be started');
    first.kill('SIGKILL');
    await exited(first);
    expect(first.signalCode).toBe('SIGKILL');
    expect((await api.get<{ status: string }>(`/compat/deployments/${id}`)).body.status).toBe('deploying');

    workers.push(spawnWorker(h).child);
    const running = await api.waitFor(id, ['running', 'failed'], 90_000);
    expect(running.status).toBe('running');
    expect(await (await fetch(running.url as string)).text()).toBe('hello after a slow start\n');
    const containers = await h.docker.listContainers({
      all: true,
      filters: { label: [`dev.slipway.deployment-id=${id}`] },
    });
    expect(containers).toHaveLength(1);

    expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    await eventually(async () => {
      const left = await h.docker.listContainers({
        all: true,
        filters: { label: [`dev.slipway.deployment-id=${id}`] },
      });
      return left.length === 0 ? true : undefined;
    }, 'the container to be removed');
  });
});
