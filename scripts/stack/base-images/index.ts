import fs from 'node:fs';
import path from 'node:path';

import type Docker from 'dockerode';

import { BASE_IMAGE_NAMES, type BaseImageName } from '@shared/build/base-images';

import { withMachineLock } from '../machine-lock';
import type { Part, PartResult } from '../part';
import { cacheDir } from '../paths';
import { type AllBases, baseImageTags, type DebianSource, debianSource } from './catalogue';
import { absent, buildBase, importRootfs, tagLatest } from './engine';
import { debootstrapRootfs } from './rootfs';

export { type AllBases, baseImageTags, type DebianSource, debianSource } from './catalogue';
export { BASE_IMAGE_NAMES, type BaseImageName } from '@shared/build/base-images';

/**
 * Slipway's base images, built on this machine because no container registry is reachable (docs/architecture.md,
 * "Builds and images"): a Debian minbase made by debootstrap (rootfs.ts) and imported once, then one ordinary
 * Dockerfile per base on top of it (engine.ts). Every image is tagged by a hash of its inputs (catalogue.ts), and
 * `latest`, so a second run finds them in a second.
 */

export interface BaseImagesResult {
  /** Content-hash tags (`slipway/node:3f…`) of every base asked for. */
  images: Record<AllBases, string>;
  /** Wall time of each image built by this call, in ms; absent when it was already there. */
  built: Partial<Record<AllBases, number>>;
}

export interface EnsureOptions {
  docker: Docker;
  /** Repository prefix of the tags: `slipway` (what the configuration names); benchmarks build under another. */
  prefix?: string;
  progress?: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * Makes sure the bases in `names` (and the Debian base they need, when one must be built) exist on the engine,
 * building what is missing. One process builds at a time on this machine (a lock in the cache directory): tests
 * and `npm start` started together wait for each other rather than debootstrap twice.
 */
export async function ensureBaseImages(
  opts: EnsureOptions,
  names: readonly BaseImageName[] = BASE_IMAGE_NAMES,
): Promise<BaseImagesResult> {
  const progress = opts.progress ?? (() => undefined);
  const source = debianSource();
  const tags = baseImageTags(source, opts.prefix);
  const built: BaseImagesResult['built'] = {};
  const missing = async () => {
    const out: BaseImageName[] = [];
    for (const n of names) if (await absent(opts.docker, tags[n])) out.push(n);
    return out;
  };
  progress('looking for the base images on the engine');
  if ((await missing()).length > 0) {
    await withMachineLock('base-images', progress, opts.signal, async () => {
      const todo = await missing();
      if (todo.length === 0) return;
      if (await absent(opts.docker, tags.debian)) {
        const t0 = Date.now();
        await importDebian(opts.docker, tags.debian, source, progress, opts.signal);
        built.debian = Date.now() - t0;
      }
      for (const name of todo) {
        const t0 = Date.now();
        progress(`building ${tags[name]}`);
        await buildBase(opts.docker, name, tags, progress, opts.signal);
        built[name] = Date.now() - t0;
      }
    });
  }
  for (const n of ['debian' as const, ...names]) {
    if (n !== 'debian' || !(await absent(opts.docker, tags.debian))) await tagLatest(opts.docker, tags[n]);
  }
  return { images: tags, built };
}

/** debootstrap into a scratch directory, then `tar | docker import`; the directory is removed either way. */
async function importDebian(
  docker: Docker,
  tag: string,
  source: DebianSource,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const root = path.join(cacheDir(), `debian-rootfs-${process.pid}`);
  await fs.promises.rm(root, { recursive: true, force: true });
  await fs.promises.mkdir(path.dirname(root), { recursive: true });
  try {
    await debootstrapRootfs(root, source, progress, signal);
    progress(`importing the root file system as ${tag}`);
    await importRootfs(docker, root, tag, signal);
  } finally {
    await fs.promises.rm(root, { recursive: true, force: true });
  }
}

const VARIABLE: Record<BaseImageName, string> = {
  node: 'BUILD_BASE_IMAGE_NODE',
  python: 'BUILD_BASE_IMAGE_PYTHON',
  static: 'BUILD_BASE_IMAGE_STATIC',
};

/**
 * `npm start`'s step after the engine is up: builds the bases whose BUILD_BASE_IMAGE_* is unset (a set one, a
 * public image for instance, is used as is) and points the worker at their content-hash tags.
 */
export function baseImagesPart(docker: () => Docker): Part {
  return {
    name: 'base images',
    async start(ctx): Promise<PartResult> {
      const wanted = BASE_IMAGE_NAMES.filter((n) => !process.env[VARIABLE[n]]);
      if (wanted.length === 0) return { env: {}, started: [], external: true };
      const t0 = Date.now();
      const result = await ensureBaseImages(
        { docker: docker(), progress: ctx.progress, ...(ctx.signal ? { signal: ctx.signal } : {}) },
        wanted,
      );
      const built = Object.keys(result.built);
      ctx.progress(
        built.length > 0
          ? `built ${built.join(', ')} in ${((Date.now() - t0) / 1000).toFixed(0)} s`
          : `all present (${Date.now() - t0} ms)`,
      );
      return {
        env: Object.fromEntries(wanted.map((n) => [VARIABLE[n], result.images[n]])),
        started: [],
        external: false,
      };
    },
  };
}
