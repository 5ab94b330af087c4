import os from 'node:os';
import path from 'node:path';

export const repoRoot = path.resolve(__dirname, '..', '..');

/** Per-user cache shared by every clone on the machine: tools are built once per name and version. */
export function cacheDir(): string {
  if (process.env.SLIPWAY_CACHE_DIR) return process.env.SLIPWAY_CACHE_DIR;
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(base, 'slipway');
}
