import path from 'node:path';

/**
 * The rules a volume's ID, size and mount target are held to before any of them reaches the engine, a path on the
 * host or a tool's arguments (activities/providers/engine-volumes.ts), and the engine volume's name. Plain functions,
 * so the api can hold a request to the same rules.
 */

/** A volume's `sizeGb` counts GiB: a 1 GB volume is an image of 1024³ bytes. */
export const GIB = 1024 ** 3;

/** The largest volume one image holds; past it a size is a mistake, not a plan. */
export const MAX_VOLUME_GB = 16_384;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const isVolumeId = (value: unknown): value is string => typeof value === 'string' && UUID.test(value);

/** Volume IDs are lower-case UUIDs: nothing else becomes a file name, a mountpoint or an engine name. */
export function checkVolumeId(volumeId: string): void {
  if (!isVolumeId(volumeId)) throw new TypeError('a volume ID must be a lower-case UUID (8-4-4-4-12 hex digits)');
}

export function checkSizeGb(sizeGb: number): void {
  if (!Number.isSafeInteger(sizeGb) || sizeGb < 1 || sizeGb > MAX_VOLUME_GB)
    throw new TypeError(`a volume's size must be a whole number of GB from 1 to ${MAX_VOLUME_GB}`);
}

/** The engine volume containers mount: one per volume, on the engine's host. */
export function engineVolumeName(volumeId: string): string {
  checkVolumeId(volumeId);
  return `slipway-vol-${volumeId}`;
}

/** Paths a volume may not be mounted over: the container's root and what the runtime itself mounts. */
const RESERVED = ['/', '/proc', '/sys', '/dev'];

/**
 * Why a path inside a container cannot take a volume, or undefined when it can: an absolute, normalised path of at
 * most 4096 bytes with no control characters, not the root and not inside /proc, /sys or /dev.
 */
export function mountTargetError(target: string): string | undefined {
  if (typeof target !== 'string' || !target.startsWith('/')) return 'a mount path must be absolute (start with /)';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(target)) return 'a mount path may not contain control characters';
  if (Buffer.byteLength(target) > 4096) return 'a mount path may be at most 4096 bytes long';
  const trimmed = target.length > 1 ? target.replace(/\/+$/, '') : target;
  if (path.posix.normalize(trimmed) !== trimmed) return 'a mount path may not contain "." or ".." parts or "//"';
  if (RESERVED.some((r) => trimmed === r || (r !== '/' && trimmed.startsWith(`${r}/`))))
    return `a volume cannot be mounted at ${trimmed}: it is the container's root or the runtime's own (/proc, /sys, /dev)`;
  return undefined;
}
