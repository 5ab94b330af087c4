import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { ifAbsent } from '@shared/ignore';
import { checkVolumeId, GIB } from '@shared/volumes/mount';

const run = promisify(execFile);

/**
 * A persistent volume's filesystem on the engine's host: an ext4 image file of exactly the volume's size, allocated
 * whole when it is made, loop-mounted beside it (docs/architecture.md, "Volumes: storage"). Every path here is built
 * from a checked volume ID, and every tool runs by execFile with its arguments: nothing passes through a shell.
 */

/** What went wrong, in words the volume's owner (often an agent) can act on; never a tool's own output. */
export type VolumeStorageFault = 'hostFull' | 'sizeMismatch' | 'notOurs' | 'inUse';

export class VolumeStorageError extends Error {
  override name = 'VolumeStorageError';
  constructor(
    readonly fault: VolumeStorageFault,
    message: string,
  ) {
    super(message);
  }
}

export interface VolumePaths {
  /** The filesystem image: present only once it is whole (made under `partial`, then renamed). */
  image: string;
  partial: string;
  /** Where the image is mounted; an empty directory while it is not. */
  mountpoint: string;
  /**
   * What containers see: a directory inside the mounted filesystem, so it exists only while the image is mounted and
   * a container can never write to the host's own disk in its place.
   */
  data: string;
}

/** `root` is this Slipway instance's directory under VOLUMES_DIR. */
export function volumePaths(root: string, volumeId: string): VolumePaths {
  checkVolumeId(volumeId);
  const mountpoint = path.join(root, volumeId);
  return {
    image: `${mountpoint}.img`,
    partial: `${mountpoint}.img.partial`,
    mountpoint,
    data: path.join(mountpoint, 'data'),
  };
}

export interface MountEntry {
  mountpoint: string;
  fstype: string;
  source: string;
}

/** The kernel escapes space, tab, newline and backslash in mountinfo paths as octal. */
const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(parseInt(oct, 8)));

/** /proc/self/mountinfo's lines: `id parent major:minor root mountpoint options [optional…] - fstype source …`. */
export function parseMountinfo(text: string): MountEntry[] {
  const entries: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-', 6);
    if (fields.length < 7 || dash < 0 || fields.length < dash + 3) continue;
    entries.push({ mountpoint: unescape(fields[4]!), fstype: fields[dash + 1]!, source: unescape(fields[dash + 2]!) });
  }
  return entries;
}

/** The file a loop device reads, or undefined when `source` is no loop device or it is detached. */
async function loopBackingFile(source: string): Promise<string | undefined> {
  const device = /^\/dev\/(loop\d+)$/.exec(source)?.[1];
  if (!device) return undefined;
  const file = await fs.readFile(`/sys/block/${device}/loop/backing_file`, 'utf8').catch(ifAbsent(''));
  return file.trim() || undefined;
}

/**
 * Whether the image is mounted at its mountpoint: `false` when nothing is; throws when something else is (another
 * image, a directory bound there by hand), which is not ours to use or to unmount.
 */
export async function isMounted(p: VolumePaths): Promise<boolean> {
  const mounts = parseMountinfo(await fs.readFile('/proc/self/mountinfo', 'utf8'));
  const here = mounts.filter((m) => m.mountpoint === p.mountpoint);
  if (here.length === 0) return false;
  for (const m of here)
    if (m.fstype !== 'ext4' || (await loopBackingFile(m.source)) !== p.image)
      throw new VolumeStorageError(
        'notOurs',
        "something other than the volume's image is mounted where it goes on the engine's host; the operator must unmount it",
      );
  return true;
}

/** Bytes free for new files on the filesystem holding `dir`. */
async function freeBytes(dir: string): Promise<number> {
  const s = await fs.statfs(dir);
  return s.bavail * s.bsize;
}

const stderrOf = (err: unknown) => String((err as { stderr?: unknown }).stderr ?? (err as Error).message);

/**
 * Makes the image whole or not at all: allocated in full first, so its writes never need host space later (a sparse
 * image on a full host loses them silently: the kernel logs "potential data loss" and the app's write succeeds), then
 * formatted without discard (mkfs would punch the allocation back out), then renamed into place.
 */
export async function makeImage(p: VolumePaths, volumeId: string, sizeGb: number): Promise<void> {
  const bytes = sizeGb * GIB;
  await fs.rm(p.partial, { force: true });
  try {
    await run('fallocate', ['--length', String(bytes), p.partial]);
  } catch (err) {
    const free = await freeBytes(path.dirname(p.partial));
    await fs.rm(p.partial, { force: true });
    if (/no space left/i.test(stderrOf(err)))
      throw new VolumeStorageError(
        'hostFull',
        `the engine's host has ${(free / GIB).toFixed(1)} GB free for volumes, not the ${sizeGb} GB this volume needs; ` +
          'delete this volume and create a smaller one, or ask the operator to free space',
      );
    throw err;
  }
  // -m 0: no blocks reserved for root, so an app running as root gets the same room as any other user.
  // -U: the filesystem's UUID is the volume's, so the image says whose it is.
  // Tables initialised now, not by the kernel after mounting: its lazy zeroing reaches the image through the loop
  // device as hole punches, which gave back ~2 MB of a 1 GB image's allocation within seconds of its first mount.
  await run('mkfs.ext4', [
    ...['-q', '-F', '-m', '0', '-U', volumeId],
    ...['-E', 'nodiscard,lazy_itable_init=0,lazy_journal_init=0'],
    p.partial,
  ]);
  await fs.rename(p.partial, p.image);
}

/**
 * Allocates whatever of an existing image is not (a no-op for a whole one). ext4 may still zero a few blocks through
 * the loop device (splitting an extent an app preallocated), which frees them on the host; this takes them back.
 */
export async function reallocateImage(p: VolumePaths, sizeGb: number): Promise<void> {
  await run('fallocate', ['--length', String(sizeGb * GIB), p.image]);
}

/** The image's size in whole GB, or undefined when there is no image. */
export async function imageSizeGb(p: VolumePaths): Promise<number | undefined> {
  const st = await fs.stat(p.image).catch(ifAbsent(undefined));
  return st && st.size / GIB;
}

/** Mounts the image; no device nodes and no set-user-ID programs from a tenant's files. */
export async function mountImage(p: VolumePaths): Promise<void> {
  await fs.mkdir(p.mountpoint, { recursive: true, mode: 0o700 });
  await run('mount', ['-t', 'ext4', '-o', 'loop,nodev,nosuid', p.image, p.mountpoint]);
  // World-traversable, as an engine volume's own directory is: the container's users own what they make inside.
  await fs.mkdir(p.data, { recursive: true, mode: 0o755 });
}

export async function unmountImage(p: VolumePaths): Promise<void> {
  try {
    await run('umount', [p.mountpoint]);
  } catch (err) {
    if (/busy/i.test(stderrOf(err)))
      throw new VolumeStorageError('inUse', 'the volume is still open on the engine host; stop what uses it first');
    throw err;
  }
}

/** Removes the mountpoint, image and any half-made image; only an empty mountpoint is removed (rmdir, not rm -r). */
export async function removeFiles(p: VolumePaths): Promise<void> {
  await fs.rmdir(p.mountpoint).catch(ifAbsent(undefined));
  await fs.rm(p.image, { force: true });
  await fs.rm(p.partial, { force: true });
}

/** Bytes used and free inside the mounted filesystem. */
export async function filesystemUsage(p: VolumePaths): Promise<{ usedBytes: number; freeBytes: number }> {
  const s = await fs.statfs(p.mountpoint);
  return { usedBytes: (s.blocks - s.bfree) * s.bsize, freeBytes: s.bavail * s.bsize };
}
