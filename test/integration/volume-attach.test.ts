import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { LABELS } from '@shared/constants';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

type Api = ReturnType<typeof client>;
interface Deployment {
  id: string;
  status: string;
  revision: number;
  volumes?: { volumeId: string; name: string | null; mountPath: string }[];
}
interface Release {
  revision: number;
  trigger: string;
  mounts?: { volumeId: string; mountPath: string }[];
}

/**
 * Volumes attached to deployments through a real worker and engine: the data an app wrote on its volume is there
 * after each new release (an env change, a rollback, a stop and start), and the rules of one writer hold.
 */
describe('volumes attached to deployments', () => {
  let h: Harness;
  let image: string;
  let api: Api;
  let dir: string;

  beforeAll(async () => {
    // A directory of the test's own: the worktree's .data/volumes is npm start's.
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-volume-attach-'));
    h = await startHarness('volume-attach', {
      VOLUMES_DIR: dir,
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
      DEPLOY_READY_TIMEOUT_S: '30',
    });
    image = await buildFixtureImage(h.docker, 'hello');
    api = client(h, (await h.newOrg('pro')).token);
  });
  afterAll(async () => {
    await h?.stop();
    await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
  });

  const get = async (id: string) => (await api.get<{ data: Deployment }>(`/platform/deployments/${id}`)).body.data;
  const waitFor = (id: string, ok: (d: Deployment) => boolean, what: string) =>
    eventually(
      async () => {
        const d = await get(id);
        if (d.status === 'failed') throw new Error(`deployment ${id} failed: ${JSON.stringify(d)}`);
        return ok(d) ? d : undefined;
      },
      `deployment ${id} ${what}`,
      120_000,
    );
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
  /** The one running container of the deployment, as the engine has it. */
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
  const readyVolume = async (name: string) => {
    const v = await api.post<{ data: { id: string } }>('/platform/volumes', { name, sizeGb: 1 });
    expect(v.status).toBe(201);
    const id = v.body.data.id;
    await eventually(
      async () =>
        (await api.get<{ data: { status: string } }>(`/platform/volumes/${id}`)).body.data.status === 'ready' ||
        undefined,
      `volume ${id} ready`,
    );
    return id;
  };
  const releases = async (id: string) =>
    (await api.get<{ data: { releases: Release[] } }>(`/platform/deployments/${id}/releases`)).body.data.releases;

  it('keeps the data through an env change, a rollback and a stop and start; one writer; detach and destroy', async () => {
    const volumeId = await readyVolume(`data-${randomUUID().slice(0, 6)}`);
    const name = `va-${randomUUID().slice(0, 6)}`;

    // Attached at create: the first release mounts it.
    const created = await api.post<{ data: { deployment: Deployment } }>('/platform/deployments', {
      image,
      name,
      port: 8080,
      volumes: [{ volumeId, mountPath: '/data' }],
    });
    expect(created.status).toBe(202);
    const id = created.body.data.deployment.id;
    const first = await waitFor(id, (d) => d.status === 'running', 'running');
    expect(first.volumes).toEqual([{ volumeId, name: expect.any(String), mountPath: '/data' }]);
    await exec(id, ['/bin/busybox', 'sh', '-c', 'echo kept > /data/file']);

    // An env change: a new release, a new container, the same data.
    const patched = await api.call<{ data: { command: { id: string } } }>('PATCH', `/platform/deployments/${id}/env`, {
      set: { GREETING: 'hi' },
    });
    expect(patched.status).toBe(202);
    expect(await command(id, patched.body.data.command.id)).toMatchObject({ state: 'succeeded' });
    expect(await exec(id, ['/bin/busybox', 'cat', '/data/file'])).toBe('kept\n');

    // A rollback to release 1 keeps the deployment's current volume.
    const back = await api.post<{ data: { command: { id: string } } }>(`/platform/deployments/${id}/rollback`, {
      revision: 1,
    });
    expect(await command(id, back.body.data.command.id)).toMatchObject({ state: 'succeeded' });
    expect(await exec(id, ['/bin/busybox', 'cat', '/data/file'])).toBe('kept\n');
    expect((await releases(id))[0]).toMatchObject({ trigger: 'rollback', mounts: [{ volumeId, mountPath: '/data' }] });

    // Stop and start: the same release, its mount.
    const stop = await api.post<{ data: { command: { id: string } } }>(`/platform/deployments/${id}/stop`);
    await command(id, stop.body.data.command.id);
    const start = await api.post<{ data: { command: { id: string } } }>(`/platform/deployments/${id}/start`);
    expect(await command(id, start.body.data.command.id)).toMatchObject({ state: 'succeeded' });
    expect(await exec(id, ['/bin/busybox', 'cat', '/data/file'])).toBe('kept\n');

    // One writer: no scale past one instance, no second deployment, no delete while mounted.
    const scale = await api.post<{ message: string }>(`/platform/deployments/${id}/scale`, { replicas: 2 });
    expect(scale.status).toBe(409);
    expect(scale.body.message).toContain('scale the deployment to 1 first');
    const other = await api.post<{ data: { deployment: Deployment } }>('/platform/deployments', {
      image,
      name: `${name}-b`,
      port: 8080,
      replicas: 2,
    });
    const otherId = other.body.data.deployment.id;
    const elsewhere = await api.post<{ message: string }>(`/platform/deployments/${otherId}/volumes`, {
      volumeId,
      mountPath: '/data',
    });
    expect(elsewhere.status).toBe(409);
    expect(elsewhere.body.message).toContain(`${name} (${id})`);
    await waitFor(otherId, (d) => d.status === 'running', 'running');
    const atTwo = await api.post<{ message: string }>(`/platform/deployments/${otherId}/volumes`, {
      volumeId: await readyVolume(`two-${randomUUID().slice(0, 6)}`),
      mountPath: '/data',
    });
    expect(atTwo.status).toBe(409);
    expect(atTwo.body.message).toContain('scale the deployment to 1 first');
    const del = await api.call<{ message: string }>('DELETE', `/platform/volumes/${volumeId}`);
    expect(del.status).toBe(409);
    expect(del.body.message).toContain(`mounted by deployment ${name} (${id})`);
    expect(del.body.message).toContain(`DELETE /platform/deployments/${id}/volumes/${volumeId}`);
    // The volume's own read names its holder, so a person sees why before trying.
    const held = await api.get<{ data: { attachedTo: unknown } }>(`/platform/volumes/${volumeId}`);
    expect(held.body.data.attachedTo).toEqual({ deploymentId: id, deploymentName: name, mountPath: '/data' });
    // Another organisation sees neither.
    const stranger = client(h, (await h.newOrg('pro')).token);
    expect((await stranger.get(`/platform/deployments/${id}/volumes`)).status).toBe(404);

    // Detach: a new release without the mount; the volume stays.
    const detached = await api.call<{ data: { command: { id: string }; volumes: unknown[] } }>(
      'DELETE',
      `/platform/deployments/${id}/volumes/${volumeId}`,
    );
    expect(detached.status).toBe(202);
    expect(detached.body.data.volumes).toEqual([]);
    expect(await command(id, detached.body.data.command.id)).toMatchObject({ state: 'succeeded' });
    expect((await releases(id))[0]!.mounts).toEqual([]);
    expect(
      (await api.get<{ data: { attachedTo: unknown } }>(`/platform/volumes/${volumeId}`)).body.data.attachedTo,
    ).toBeNull();
    expect(await exec(id, ['/bin/busybox', 'sh', '-c', 'test -e /data/file && echo present || echo absent'])).toBe(
      'absent\n',
    );

    // Attached again, then the deployment destroyed: the volume stays, with its data, and can be deleted.
    const again = await api.post<{ data: { command: { id: string } } }>(`/platform/deployments/${id}/volumes`, {
      volumeId,
      mountPath: '/srv/state',
    });
    expect(again.status).toBe(202);
    expect(await command(id, again.body.data.command.id)).toMatchObject({ state: 'succeeded' });
    expect(await exec(id, ['/bin/busybox', 'cat', '/srv/state/file'])).toBe('kept\n');
    expect((await api.call('DELETE', `/platform/deployments/${id}`)).status).toBe(204);
    // Deleted once its deployment's containers are gone: a delete the engine still refused (a container not yet
    // removed) leaves the volume ready, and is sent again.
    await eventually(async () => {
      const r = await api.call('DELETE', `/platform/volumes/${volumeId}`);
      if (r.status === 404) return true;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return (await api.get(`/platform/volumes/${volumeId}`)).status === 404 || undefined;
    }, 'the volume deleted once its deployment is gone');
    await api.call('DELETE', `/platform/deployments/${otherId}`);
  });
});
