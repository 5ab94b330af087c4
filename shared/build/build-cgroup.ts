import fs from 'node:fs/promises';
import path from 'node:path';

import type Docker from 'dockerode';

import { ifAbsent } from '../ignore';

/** Parent of every build's cgroup, under each controller's hierarchy. */
const PARENT = 'slipway-builds';

export interface BuildCgroup {
  /** For the build API's `cgroupparent`: each step's container is created under it. */
  parent: string;
  /** True when a step was refused a process because the build reached its limit. */
  limitHit(): Promise<boolean>;
  /** Removes the build's cgroup from every hierarchy (the engine leaves the parent it was given). */
  remove(): Promise<void>;
}

/**
 * The classic /build API has no pids option, but it takes a cgroup parent: a cgroup made here with `pids.max` set
 * bounds the processes of every step of one build together. Needs the engine on this host with the cgroupfs driver
 * on cgroup v1 (this worker writes to its /sys/fs/cgroup); anywhere else returns undefined and the build runs
 * without a process limit (memory and BUILD_TIMEOUT_S still bound it).
 */
export async function createBuildCgroup(
  docker: Pick<Docker, 'info'>,
  opts: { name: string; pids: number; dockerHost?: string; root?: string },
): Promise<BuildCgroup | undefined> {
  const root = opts.root ?? '/sys/fs/cgroup';
  if (opts.dockerHost && !opts.dockerHost.startsWith('unix://')) return undefined;
  const info = (await docker.info()) as { CgroupDriver?: string; CgroupVersion?: string };
  if (info.CgroupDriver !== 'cgroupfs' || (info.CgroupVersion ?? '1') !== '1') return undefined;
  const pidsDir = path.join(root, 'pids', PARENT, opts.name);
  try {
    await fs.mkdir(pidsDir, { recursive: true });
    await fs.writeFile(path.join(pidsDir, 'pids.max'), String(opts.pids));
  } catch {
    // The cgroup tree is not ours to write here (no root, mounted read-only): the build runs without this limit.
    await fs.rmdir(pidsDir).catch(ifAbsent(undefined));
    return undefined;
  }
  return {
    parent: `/${PARENT}/${opts.name}`,
    async limitHit() {
      // The refused fork is counted in the step container's own cgroup, gone by now; the peak here says whether
      // the build ever stood at its limit.
      // pids.peak is missing on kernels before 6.1; the other file then still tells.
      const read = (file: string) => fs.readFile(path.join(pidsDir, file), 'utf8').catch(ifAbsent(''));
      const peak = Number((await read('pids.peak')).trim() || 0);
      const events = Number(/^max (\d+)/m.exec(await read('pids.events'))?.[1] ?? 0);
      return peak >= opts.pids || events > 0;
    },
    async remove() {
      const controllers = await fs.readdir(root).catch(ifAbsent([] as string[]));
      const dirs = controllers.map((c) => path.join(root, c, PARENT, opts.name));
      // A cancelled build returns while the engine still removes the step's container (the cgroup is busy until
      // then): retry in the background for a while rather than hold the activity or leave the directory behind.
      const sweep = async (attempt: number): Promise<void> => {
        const busy: string[] = [];
        for (const dir of dirs) {
          await fs.rmdir(dir).catch((err: NodeJS.ErrnoException) => {
            if (err.code !== 'ENOENT') busy.push(dir);
          });
        }
        if (busy.length > 0 && attempt < 60) setTimeout(() => void sweep(attempt + 1), 1000).unref();
      };
      await sweep(0);
    },
  };
}
