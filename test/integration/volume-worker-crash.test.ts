import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { isMounted, parseMountinfo, unmountImage, volumePaths } from '@activities/providers/volume-host';
import { LABELS } from '@shared/constants';
import { instanceId } from '@shared/instance';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { exited, spawnWorker } from '../helpers/worker-process';

interface Deployment {
  id: string;
  status: string;
}
interface Command {
  data: { command: { id: string } };
}

/**
 * A volume's data through a worker killed with SIGKILL and a host restart's unmount: a fresh worker process mounts the
 * volume's image again as it starts (worker/main.ts), and the deployment's next container finds the file its app wrote.
 */
describe('a volume through a worker crash', () => {
  let h: Harness;
  let dir: string;
  let image: string;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-volume-crash-'));
    h = await startHarness(
      'volume-crash',
      { VOLUMES_DIR: dir, RATE_LIMIT_PLATFORM_PER_15MIN: '100000', DEPLOY_READY_TIMEOUT_S: '30' },
      { worker: false },
    );
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGTERM');
      await exited(w);
    }
    await h?.stop();
    // Only once nothing is mounted below it: rm would otherwise reach into a mounted volume.
    const mounted = parseMountinfo(await fs.readFile('/proc/self/mountinfo', 'utf8')).some((m) =>
      m.mountpoint.startsWith(`${dir}/`),
    );
    if (!mounted) await fs.rm(dir, { recursive: true, force: true });
  });

  it('keeps the file an app wrote: SIGKILL, the image unmounted as by a host restart, a new worker, stop and start', async () => {
    const api = client(h, (await h.newOrg('pro')).token);
    const first = spawnWorker(h).child;
    workers.push(first);

    const get = async (id: string) => (await api.get<{ data: Deployment }>(`/platform/deployments/${id}`)).body.data;
    const command = (id: string, commandId: string) =>
      eventually(
        async () => {
          const r = await api.get<{ data: { state: string; message?: string } }>(
            `/platform/deployments/${id}/commands/${encodeURIComponent(commandId)}`,
          );
          return r.body.data.state === 'running' ? undefined : r.body.data;
        },
        `command ${commandId} to end`,
        120_000,
      );
    const serving = async (id: string) => {
      const list = await h.docker.listContainers({ filters: { label: [`${LABELS.deploymentId}=${id}`] } });
      expect(list).toHaveLength(1);
      return h.docker.getContainer(list[0]!.Id);
    };
    const exec = async (id: string, cmd: string[]) => {
      const e = await (await serving(id)).exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
      const stream = await e.start({});
      const chunks: Buffer[] = [];
      await new Promise<void>((resolve, reject) => {
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', resolve);
        stream.on('error', reject);
      });
      // The engine's multiplexed frames: an 8-byte header before each chunk.
      const out: string[] = [];
      const all = Buffer.concat(chunks);
      for (let i = 0; i + 8 <= all.length;) {
        const n = all.readUInt32BE(i + 4);
        out.push(all.subarray(i + 8, i + 8 + n).toString());
        i += 8 + n;
      }
      return out.join('');
    };

    // A volume, attached to a deployment whose app writes a file on it.
    const vol = await api.post<{ data: { id: string } }>('/platform/volumes', { name: 'state', sizeGb: 1 });
    expect(vol.status).toBe(201);
    const volumeId = vol.body.data.id;
    await eventually(
      async () =>
        (await api.get<{ data: { status: string } }>(`/platform/volumes/${volumeId}`)).body.data.status === 'ready' ||
        undefined,
      `volume ${volumeId} ready`,
    );
    const created = await api.post<{ data: { deployment: Deployment } }>('/platform/deployments', {
      image,
      name: `vc-${randomUUID().slice(0, 6)}`,
      port: 8080,
      volumes: [{ volumeId, mountPath: '/data' }],
    });
    expect(created.status).toBe(202);
    const id = created.body.data.deployment.id;
    await eventually(async () => {
      const d = await get(id);
      if (d.status === 'failed') throw new Error(`deployment ${id} failed`);
      return d.status === 'running' ? d : undefined;
    }, 'the deployment running');
    await exec(id, ['/bin/busybox', 'sh', '-c', 'echo survived > /data/file && sync']);

    // The worker dies without a word.
    first.kill('SIGKILL');
    await exited(first);
    expect(first.signalCode).toBe('SIGKILL');

    // A host restart: the container stops and the volume's image is no longer mounted; what containers bind is gone.
    await (await serving(id)).stop();
    const p = volumePaths(path.join(dir, instanceId(h.config)), volumeId);
    await unmountImage(p);
    expect(await isMounted(p)).toBe(false);
    await expect(fs.access(p.data)).rejects.toThrow();

    // A new worker process mounts the image again as it starts, before any command reaches it.
    workers.push(spawnWorker(h).child);
    await eventually(async () => ((await isMounted(p)) ? true : undefined), 'the volume image mounted again');
    expect(await fs.readFile(path.join(p.data, 'file'), 'utf8')).toBe('survived\n');

    // Stop and start through the api: the new container finds the file.
    const stop = await api.post<Command>(`/platform/deployments/${id}/stop`);
    expect(stop.status).toBe(202);
    expect(await command(id, stop.body.data.command.id)).toMatchObject({ state: 'succeeded' });
    const start = await api.post<Command>(`/platform/deployments/${id}/start`);
    expect(start.status).toBe(202);
    expect(await command(id, start.body.data.command.id)).toMatchObject({ state: 'succeeded' });
    expect(await exec(id, ['/bin/busybox', 'cat', '/data/file'])).toBe('survived\n');

    // Destroyed, then the volume deleted: nothing left mounted under the test's directory.
    expect((await api.call('DELETE', `/platform/deployments/${id}`)).status).toBe(204);
    // Asked again while the destroyed deployment's container is still going (the engine refuses, the volume stays).
    await eventually(
      async () => {
        const r = await api.get<{ data: { status: string; error: string | null } }>(`/platform/volumes/${volumeId}`);
        if (r.status === 404) return true;
        if (r.body.data.status !== 'deleting') await api.call('DELETE', `/platform/volumes/${volumeId}`);
        throw new Error(`volume ${r.body.data.status}: ${r.body.data.error}`);
      },
      'the volume deleted',
      120_000,
    );
    expect(await isMounted(p)).toBe(false);
  }, 600_000);
});
