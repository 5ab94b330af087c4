import fs from 'node:fs/promises';
import path from 'node:path';

import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';
import { ifAbsent, ignore } from '@shared/ignore';
import { checkSizeGb, engineVolumeName, GIB, isVolumeId, mountTargetError } from '@shared/volumes/mount';

import {
  filesystemUsage,
  imageSizeGb,
  isMounted,
  makeImage,
  mountImage,
  reallocateImage,
  removeFiles,
  unmountImage,
  type VolumePaths,
  volumePaths,
  VolumeStorageError,
} from './volume-host';

export { VolumeStorageError } from './volume-host';

export interface EngineVolumesDeps {
  docker: Docker;
  /** Label value naming this Slipway instance: it touches only volumes carrying it. */
  instance: string;
  /** VOLUMES_DIR: each instance keeps its images in a directory of its own below it. */
  dir: string;
}

export interface VolumeRef {
  volumeId: string;
  orgId: string;
}

export interface VolumeUsage {
  /** The volume's size: what its image holds, filesystem structures included. */
  sizeBytes: number;
  /** Used inside its filesystem (files, and the journal and tables the filesystem keeps). */
  usedBytes: number;
  /** What a write may still take before it fails with "No space left on device". */
  freeBytes: number;
}

const ORG_ID = /^[A-Za-z0-9_-]{1,100}$/;
/** An instance label becomes a directory name: the same rule as SLIPWAY_INSTANCE, so never "." or "..". */
const INSTANCE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

const statusCode = (err: unknown) => (err as { statusCode?: number }).statusCode;

/**
 * Persistent volumes on the engine (docs/architecture.md, "Volumes: storage"). The worker makes each volume's image
 * and mounts it on the engine's host; containers get an engine volume (driver `local`, a bind of the image's data
 * directory) that carries this instance's labels. The engine itself cannot loop-mount an image (its `local` driver
 * passes `loop` to mount(2), which refuses it), and a volume over a loop device by name would name another device
 * after every host restart.
 *
 * Each call holds a lock per volume in this process: ensure and remove of one volume never interleave on a worker.
 */
export function createEngineVolumes(deps: EngineVolumesDeps) {
  const { docker, instance } = deps;
  if (!INSTANCE.test(instance)) throw new TypeError('the instance label cannot name a directory');
  const root = path.join(deps.dir, instance);
  const held = new Map<string, Promise<unknown>>();

  function locked<T>(volumeId: string, work: () => Promise<T>): Promise<T> {
    const before = held.get(volumeId) ?? Promise.resolve();
    const mine = before.then(work, work);
    const tail = mine.then(
      () => undefined,
      ignore('the caller holds `mine` and sees its failure; the next in line runs either way'),
    );
    held.set(volumeId, tail);
    void tail.then(() => held.get(volumeId) === tail && held.delete(volumeId));
    return mine;
  }

  const labels = (v: VolumeRef) => ({
    [LABELS.managed]: 'true',
    [LABELS.volumeId]: v.volumeId,
    [LABELS.orgId]: v.orgId,
    [LABELS.instance]: instance,
  });
  /** The engine binds the data directory, which exists only while the image is mounted. */
  const driverOptions = (p: VolumePaths) => ({ type: 'none', o: 'bind', device: p.data });

  function checkRef(v: VolumeRef): VolumePaths {
    if (typeof v.orgId !== 'string' || !ORG_ID.test(v.orgId))
      throw new TypeError('an org ID must be 1 to 100 of [A-Za-z0-9_-]');
    return volumePaths(root, v.volumeId);
  }

  async function inspect(name: string): Promise<Docker.VolumeInspectInfo | undefined> {
    return docker
      .getVolume(name)
      .inspect()
      .catch((err: unknown) => {
        if (statusCode(err) === 404) return undefined;
        throw err;
      });
  }

  function checkOurs(info: Docker.VolumeInspectInfo, volumeId: string): void {
    if (info.Labels?.[LABELS.instance] !== instance || info.Labels?.[LABELS.volumeId] !== volumeId)
      throw new VolumeStorageError('notOurs', `the engine volume ${info.Name} belongs to another Slipway installation`);
  }

  async function ensureEngineVolume(v: VolumeRef, p: VolumePaths): Promise<void> {
    const name = engineVolumeName(v.volumeId);
    // The engine answers a create of an existing name with that volume, so a concurrent create is no error.
    if (!(await inspect(name)))
      await docker.createVolume({ Name: name, Driver: 'local', DriverOpts: driverOptions(p), Labels: labels(v) });
    const current = await inspect(name);
    if (!current) throw new Error(`the engine volume ${name} vanished right after it was created`);
    checkOurs(current, v.volumeId);
    if (current.Options?.device !== p.data)
      throw new VolumeStorageError(
        'notOurs',
        `the engine volume ${name} binds another directory than this volume's image (VOLUMES_DIR changed since it was made); the operator must move the image back or remove that engine volume`,
      );
  }

  return {
    /**
     * Makes the volume's storage, or finds it made: the image (allocated in full), mounted (again, after a host
     * restart), and its engine volume. Safe to repeat at any point of an earlier attempt.
     */
    ensure(v: VolumeRef & { sizeGb: number }): Promise<void> {
      const p = checkRef(v);
      checkSizeGb(v.sizeGb);
      return locked(v.volumeId, async () => {
        // Another installation's engine volume under this name fails the volume before any host space is taken.
        const existing = await inspect(engineVolumeName(v.volumeId));
        if (existing) checkOurs(existing, v.volumeId);
        await fs.mkdir(root, { recursive: true, mode: 0o700 });
        const size = await imageSizeGb(p);
        if (size === undefined) await makeImage(p, v.volumeId, v.sizeGb);
        else if (size !== v.sizeGb)
          throw new VolumeStorageError(
            'sizeMismatch',
            `the volume's storage already exists with ${size} GB, not ${v.sizeGb} GB; delete the volume and create it again`,
          );
        else
          await reallocateImage(p, v.sizeGb).catch(
            ignore(
              'a host without room for the few blocks ext4 gave back still mounts the volume; the next ensure tries again',
            ),
          );
        if (!(await isMounted(p))) await mountImage(p);
        await ensureEngineVolume(v, p);
      });
    },

    /**
     * Removes the engine volume, then unmounts and deletes the image. Nothing there is success. The engine refuses to
     * remove a volume any container (running or stopped) still names: that is `inUse`, and nothing is removed. An
     * engine volume of that name that is not this instance's stays.
     */
    remove(volumeId: string): Promise<void> {
      const p = volumePaths(root, volumeId);
      const name = engineVolumeName(volumeId);
      return locked(volumeId, async () => {
        const info = await inspect(name);
        // Another installation's engine volume under this name (the reason this volume failed) is left alone.
        if (info && info.Labels?.[LABELS.instance] === instance) {
          await docker
            .getVolume(name)
            .remove()
            .catch(async (err: unknown) => {
              if (statusCode(err) === 404) return;
              if (statusCode(err) !== 409) throw err;
              const users = await docker.listContainers({ all: true, filters: { volume: [name] } });
              const named = users.map((c) => c.Names[0]?.replace(/^\//, '') ?? c.Id.slice(0, 12)).join(', ');
              throw new VolumeStorageError(
                'inUse',
                `the volume is still mounted by container(s) ${named || '(unknown)'}; remove the deployments that use it, then delete it again`,
              );
            });
        }
        if (await isMounted(p)) await unmountImage(p);
        await removeFiles(p);
      });
    },

    /** Size, used and free bytes of a mounted volume; undefined when its image is not mounted on this host. */
    async usage(volumeId: string): Promise<VolumeUsage | undefined> {
      const p = volumePaths(root, volumeId);
      const sizeGb = await imageSizeGb(p);
      if (sizeGb === undefined || !(await isMounted(p))) return undefined;
      return { sizeBytes: sizeGb * GIB, ...(await filesystemUsage(p)) };
    },

    /**
     * What a container's `HostConfig.Mounts` takes to mount the volume at `target`. Call `ensure` first (its image is
     * mounted again after a host restart only then). Should the engine volume be missing, the engine makes it from
     * these options, as a bind of the data directory: with the image not mounted that directory does not exist and
     * the container does not start, so nothing is ever written to the host's own disk in its place.
     */
    mountSpec(v: VolumeRef, target: string, opts: { readOnly?: boolean } = {}): Docker.MountSettings {
      const p = checkRef(v);
      const error = mountTargetError(target);
      if (error) throw new TypeError(error);
      return {
        Type: 'volume',
        Source: engineVolumeName(v.volumeId),
        Target: target,
        ReadOnly: opts.readOnly ?? false,
        VolumeOptions: { NoCopy: false, Labels: labels(v), DriverConfig: { Name: 'local', Options: driverOptions(p) } },
      };
    },

    /**
     * Mounts every image of this instance that is not mounted (a host restart unmounts them all). One that fails is
     * named and the rest still mounted: `ensure` tries it again when a container needs it.
     */
    async remountAll(): Promise<{ mounted: number; failed: { volumeId: string; error: string }[] }> {
      const names = await fs.readdir(root).catch(ifAbsent([] as string[]));
      const result = { mounted: 0, failed: [] as { volumeId: string; error: string }[] };
      for (const file of names) {
        const volumeId = /^(.+)\.img$/.exec(file)?.[1];
        if (!volumeId || !isVolumeId(volumeId)) continue;
        const p = volumePaths(root, volumeId);
        try {
          await locked(volumeId, async () => {
            if (await isMounted(p)) return;
            await mountImage(p);
            result.mounted++;
          });
        } catch (err) {
          result.failed.push({ volumeId, error: String(err) });
        }
      }
      return result;
    },
  };
}

export type EngineVolumes = ReturnType<typeof createEngineVolumes>;
