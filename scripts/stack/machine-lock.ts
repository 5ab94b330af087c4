import fs from 'node:fs';
import path from 'node:path';

import { ifAbsent } from '@shared/ignore';

import { cacheDir } from './paths';

/**
 * Runs `fn` holding the machine-wide lock `name`: a directory made atomically in the cache directory, with
 * the holder's pid inside, taken over when that process is gone.
 */
export async function withMachineLock<T>(
  name: string,
  progress: (l: string) => void,
  signal: AbortSignal | undefined,
  fn: () => Promise<T>,
) {
  const lock = path.join(cacheDir(), `${name}.lock`);
  await fs.promises.mkdir(cacheDir(), { recursive: true });
  let told = false;
  for (;;) {
    signal?.throwIfAborted();
    try {
      await fs.promises.mkdir(lock);
      await fs.promises.writeFile(path.join(lock, 'pid'), String(process.pid));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(await fs.promises.readFile(path.join(lock, 'pid'), 'utf8').catch(ifAbsent('')));
      const stat = await fs.promises.stat(lock).catch(ifAbsent(undefined));
      // A lock without a pid is being written (or was released just now); one whose pid is gone (or older than an hour) is stale.
      const young = stat !== undefined && Date.now() - stat.mtimeMs < 5_000;
      if ((holder && !alive(holder)) || (!holder && !young) || (stat && Date.now() - stat.mtimeMs > 3_600_000)) {
        await fs.promises.rm(lock, { recursive: true, force: true });
        continue;
      }
      if (!told) progress(`waiting for process ${holder || '?'}, which holds ${name}`);
      told = true;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.promises.rm(lock, { recursive: true, force: true });
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
