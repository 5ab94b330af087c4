import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { WorkflowUpdateFailedError } from '@temporalio/client';

import { createEngineVolumes, type EngineVolumes, VolumeStorageError } from '@activities/providers/engine-volumes';
import { parseMountinfo } from '@activities/providers/volume-host';
import { LABELS } from '@shared/constants';
import {
  deleteVolumeUpdate,
  VOLUME_WORKFLOW,
  volumeStatusQuery,
  volumeWorkflowId,
  type VolumeWorkflowInput,
} from '@shared/contracts/volume';
import { instanceId } from '@shared/instance';
import { GIB } from '@shared/volumes/mount';
import { createVolumeStore, type VolumeStore } from '@shared/volumes/store';
import { volumeWorkflowVisibility } from '@shared/volumes/visibility';

import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

const run = promisify(execFile);

describe('persistent volumes: sized storage on the engine host, made and deleted by the volume workflow', () => {
  let h: Harness;
  let dir: string;
  let root: string;
  let instance: string;
  let storage: EngineVolumes;
  let store: VolumeStore;
  let image: string;
  const volumes: string[] = [];
  const containers: string[] = [];

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-volumes-'));
    h = await startHarness('volumes', { VOLUMES_DIR: dir });
    instance = instanceId(h.config);
    root = path.join(dir, instance);
    storage = createEngineVolumes({ docker: h.docker, instance, dir });
    store = createVolumeStore(h.db);
    await store.ensureIndexes();
    image = await buildFixtureImage(h.docker, 'hello');
  });

  afterAll(async () => {
    for (const id of containers) await removeContainer(id);
    for (const id of volumes) await storage.remove(id).catch((err: unknown) => console.warn(`volume ${id}:`, err));
    await h?.stop();
    // Only once nothing is mounted below it: rm would otherwise reach into a mounted volume.
    const mounted = parseMountinfo(await fs.readFile('/proc/self/mountinfo', 'utf8')).some((m) =>
      m.mountpoint.startsWith(`${dir}/`),
    );
    if (!mounted) await fs.rm(dir, { recursive: true, force: true });
  });

  async function removeContainer(id: string) {
    await h.docker
      .getContainer(id)
      .remove({ force: true })
      .catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode !== 404) throw err;
      });
  }

  /** As the api does: the record in `creating`, then the volume's workflow with the contract's input. */
  async function createVolume(orgId: string, sizeGb = 1, volumeId = randomUUID()): Promise<string> {
    volumes.push(volumeId);
    const now = new Date();
    const record = {
      _id: volumeId,
      orgId,
      projectId: null,
      name: `v-${volumeId.slice(0, 8)}`,
      sizeGb,
      status: 'creating' as const,
      error: null,
      createdBy: 'test',
      createdAt: now,
      updatedAt: now,
    };
    await store.insert(record);
    const input: VolumeWorkflowInput = { volumeId, orgId, sizeGb };
    await h.temporal.workflow.start(VOLUME_WORKFLOW, {
      taskQueue: h.taskQueue,
      workflowId: volumeWorkflowId(volumeId),
      args: [input],
      ...volumeWorkflowVisibility(record),
    });
    return volumeId;
  }

  const settled = (orgId: string, volumeId: string) =>
    eventually(async () => {
      const r = await store.get(orgId, volumeId);
      return r && r.status !== 'creating' ? r : undefined;
    }, `volume ${volumeId} to settle`);

  /** A container of the test image running `script` with the volume at /data, as a release's container would. */
  async function runWith(volume: { volumeId: string; orgId: string }, script: string) {
    const container = await h.docker.createContainer({
      Image: image,
      Entrypoint: ['/bin/busybox'],
      Cmd: ['sh', '-c', script],
      Tty: true,
      Labels: { [LABELS.orgId]: volume.orgId },
      HostConfig: { NetworkMode: 'none', Mounts: [storage.mountSpec(volume, '/data')] },
    });
    containers.push(container.id);
    await container.start();
    const { StatusCode } = (await container.wait()) as { StatusCode: number };
    const output = (await container.logs({ stdout: true, stderr: true })).toString();
    return { id: container.id, exitCode: StatusCode, output };
  }

  const mountsAt = async (mountpoint: string) =>
    parseMountinfo(await fs.readFile('/proc/self/mountinfo', 'utf8')).filter((m) => m.mountpoint === mountpoint);
  const allocatedBytes = async (file: string) => (await fs.stat(file)).blocks * 512;
  const engineVolume = (volumeId: string) =>
    h.docker
      .getVolume(`slipway-vol-${volumeId}`)
      .inspect()
      .catch((err: unknown) => {
        if ((err as { statusCode?: number }).statusCode === 404) return undefined;
        throw err;
      });

  it('fills to "No space left on device" at its size, outlives its containers and an unmount, and is deleted on request', async () => {
    const { orgId } = await h.newOrg();
    const volumeId = await createVolume(orgId, 1);
    const volume = { volumeId, orgId };

    const ready = await settled(orgId, volumeId);
    expect(ready).toMatchObject({ status: 'ready', error: null });
    const handle = h.temporal.workflow.getHandle(volumeWorkflowId(volumeId));
    expect(await handle.query(volumeStatusQuery)).toEqual({ status: 'ready', error: null });
    expect(await (await handle.describe()).staticSummary()).toBe(`volume ${ready!.name} (1 GB)`);

    // One image of exactly the size, allocated in full, so its writes never take more of the host's disk.
    const imageFile = path.join(root, `${volumeId}.img`);
    expect((await fs.stat(imageFile)).size).toBe(GIB);
    const allocated = await allocatedBytes(imageFile);
    expect(allocated).toBeGreaterThanOrEqual(GIB);
    // Every inode table zeroed when made: the kernel's lazy zeroing would punch holes in the allocation.
    const groups = (await run('dumpe2fs', [imageFile])).stdout.split('\n').filter((l) => /^Group \d+:/.test(l));
    expect(groups.length).toBeGreaterThan(0);
    expect(groups.filter((g) => !g.includes('ITABLE_ZEROED'))).toEqual([]);
    expect(await mountsAt(path.join(root, volumeId))).toHaveLength(1);
    expect((await engineVolume(volumeId))?.Labels).toMatchObject({
      [LABELS.managed]: 'true',
      [LABELS.volumeId]: volumeId,
      [LABELS.orgId]: orgId,
      [LABELS.instance]: instance,
    });

    // A container writes past the size: the write fails inside it, on the volume's own filesystem.
    const first = await runWith(
      volume,
      'echo kept > /data/marker && dd if=/dev/zero of=/data/fill bs=1M count=2048; echo "dd exited $?"; df -k /data',
    );
    expect(first.output).toContain('No space left on device');
    expect(first.output).toContain('dd exited 1');
    const usage = await storage.usage(volumeId);
    expect(usage!.sizeBytes).toBe(GIB);
    expect(usage!.usedBytes).toBeGreaterThan(0.9 * GIB);
    expect(usage!.freeBytes).toBeLessThan(4 * 1024 * 1024);
    // Nearly a GB written, and the host's disk holds not a byte more for it than when the volume was made.
    expect(await allocatedBytes(imageFile)).toBe(allocated);

    // A host restart unmounts the image: a container then does not start (nothing lands on the host's disk), until
    // the image is mounted again.
    await run('umount', [path.join(root, volumeId)]);
    await expect(runWith(volume, 'echo lost > /data/lost')).rejects.toThrow(/no such file or directory/);
    expect(await fs.readdir(path.join(root, volumeId))).toEqual([]);
    expect((await storage.remountAll()).mounted).toBe(1);

    // The next release's container finds what the first one wrote.
    const second = await runWith(volume, 'cat /data/marker; ls /data; wc -c < /data/fill');
    expect(second.output).toContain('kept');
    expect(second.output).not.toContain('lost');
    const filled = Number(/^(\d+)\s*$/m.exec(second.output)?.[1]);
    expect(filled).toBeGreaterThan(0.9 * GIB);

    // Deleting while containers (stopped ones too) still name it removes nothing and says which.
    const refused = await handle.executeUpdate(deleteVolumeUpdate).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(String((refused as WorkflowUpdateFailedError).cause?.message)).toMatch(
      /still mounted by container\(s\) .+; remove the deployments that use it/,
    );
    expect(await store.get(orgId, volumeId)).toMatchObject({ status: 'ready', error: null });
    expect((await fs.stat(imageFile)).size).toBe(GIB);

    for (const id of containers.splice(0)) await removeContainer(id);
    expect(await handle.executeUpdate(deleteVolumeUpdate)).toEqual({ deleted: true });
    expect(await store.get(orgId, volumeId)).toBeNull();
    expect(await engineVolume(volumeId)).toBeUndefined();
    expect(await mountsAt(path.join(root, volumeId))).toEqual([]);
    expect(await fs.readdir(root)).not.toEqual(expect.arrayContaining([expect.stringContaining(volumeId)]));
    await handle.result();
  });

  it("fails with a reason when the engine's name for it is another installation's, and deletes without touching that", async () => {
    const { orgId } = await h.newOrg();
    const volumeId = randomUUID();
    const foreign = `slipway-vol-${volumeId}`;
    await h.docker.createVolume({ Name: foreign, Labels: { [LABELS.instance]: 'someone-else' } });
    try {
      const made = await createVolume(orgId, 1, volumeId);
      const failed = await settled(orgId, made);
      expect(failed).toMatchObject({ status: 'failed' });
      expect(failed!.error).toMatch(/belongs to another Slipway installation/);
      // Refused before any of the host's disk was taken for it.
      expect(await fs.readdir(root).catch(() => [])).not.toEqual(
        expect.arrayContaining([expect.stringContaining(volumeId)]),
      );

      const handle = h.temporal.workflow.getHandle(volumeWorkflowId(volumeId));
      expect(await handle.executeUpdate(deleteVolumeUpdate)).toEqual({ deleted: true });
      expect(await store.get(orgId, volumeId)).toBeNull();
      expect((await engineVolume(volumeId))?.Labels).toEqual({ [LABELS.instance]: 'someone-else' });
      expect(await fs.readdir(root)).not.toEqual(expect.arrayContaining([expect.stringContaining(volumeId)]));
    } finally {
      await h.docker.getVolume(foreign).remove();
    }
  });

  it('finishes whatever an interrupted attempt left, at every step, and never makes a second of anything', async () => {
    const { orgId } = await h.newOrg();
    const volumeId = randomUUID();
    volumes.push(volumeId);
    const v = { volumeId, orgId, sizeGb: 1 };
    const mountpoint = path.join(root, volumeId);
    await fs.mkdir(root, { recursive: true });

    // Killed while allocating or formatting: a half-made image under its temporary name.
    await fs.writeFile(path.join(root, `${volumeId}.img.partial`), 'half an image');
    await storage.ensure(v);
    expect((await fs.readdir(root)).filter((f) => f.startsWith(volumeId)).sort()).toEqual([
      volumeId,
      `${volumeId}.img`,
    ]);
    expect(await mountsAt(mountpoint)).toHaveLength(1);

    // Killed after the image, before the mount (or a host restart since).
    await run('umount', [mountpoint]);
    await storage.ensure(v);
    expect(await mountsAt(mountpoint)).toHaveLength(1);

    // Killed before the engine volume.
    await h.docker.getVolume(`slipway-vol-${volumeId}`).remove();
    await storage.ensure(v);
    expect(await engineVolume(volumeId)).toBeDefined();

    // Two attempts at once (a retry beside a slow first attempt on one worker): still one mount.
    await run('umount', [mountpoint]);
    await Promise.all([storage.ensure(v), storage.ensure(v)]);
    expect(await mountsAt(mountpoint)).toHaveLength(1);

    await expect(storage.ensure({ ...v, sizeGb: 2 })).rejects.toMatchObject({
      fault: 'sizeMismatch',
      message: expect.stringContaining('already exists with 1 GB, not 2 GB'),
    });

    await storage.remove(volumeId);
    await storage.remove(volumeId);
    expect((await fs.readdir(root)).filter((f) => f.startsWith(volumeId))).toEqual([]);
    expect(await engineVolume(volumeId)).toBeUndefined();
    expect(await mountsAt(mountpoint)).toEqual([]);
  });

  it('refuses a volume the host has no room for, before any of it exists, saying what is free', async () => {
    const small = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-volumes-small-'));
    await run('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', small]);
    const tight = createEngineVolumes({ docker: h.docker, instance, dir: small });
    const volumeId = randomUUID();
    try {
      const refused = await tight.ensure({ volumeId, orgId: 'org-1', sizeGb: 1 }).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(VolumeStorageError);
      expect(refused).toMatchObject({ fault: 'hostFull' });
      expect((refused as Error).message).toMatch(/has 0\.0 GB free for volumes, not the 1 GB this volume needs/);
      expect(await fs.readdir(path.join(small, instance))).toEqual([]);
      expect(await engineVolume(volumeId)).toBeUndefined();
    } finally {
      // Whatever a failure left inside it goes first, or the small disk stays busy.
      await tight.remove(volumeId);
      await run('umount', [small]);
      await fs.rmdir(small);
    }
  });
});
