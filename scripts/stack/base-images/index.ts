import fs from 'node:fs';
import path from 'node:path';

import type Docker from 'dockerode';

import { BASE_IMAGE_NAMES, type BaseImageName } from '@shared/build/base-images';

import { withMachineLock } from '../machine-lock';
import type { Part, PartResult } from '../part';
import { cacheDir } from '../paths';
import {
  type AllBases,
  baseImageLabels,
  baseImageTags,
  type DebianSource,
  debianSource,
  SERVICE_IMAGE_NAMES,
  serviceImageLabels,
  type ServiceImageName,
  serviceImageTags,
} from './catalogue';
import { absent, buildOnDebian, type ImageRecipe, importRootfs, tagLatest } from './engine';
import { debootstrapRootfs } from './rootfs';

export {
  type AllBases,
  baseImageTags,
  type DebianSource,
  debianSource,
  SERVICE_IMAGE_NAMES,
  type ServiceImageName,
  serviceImageTags,
} from './catalogue';
export { BASE_IMAGE_NAMES, type BaseImageName } from '@shared/build/base-images';

/**
 * Slipway's base images and service images, built on this machine because no container registry is reachable
 * (docs/architecture.md, "Builds and images"): a Debian minbase made by debootstrap (rootfs.ts) and imported once,
 * then one ordinary Dockerfile per image on top of it (engine.ts). Every image is tagged by a hash of its inputs (catalogue.ts), and
 * `latest`, so a second run finds them in a second.
 */

export interface BaseImagesResult {
  /** Content-hash tags (`slipway/node:3f…`) of every base asked for. */
  images: Record<AllBases, string>;
  /** Wall time of each image built by this call, in ms; absent when it was already there. */
  built: Partial<Record<AllBases, number>>;
}

export interface ServiceImagesResult {
  /** Content-hash tags (`slipway/postgres:3f…`) of every service image, and of the Debian base they are built on. */
  images: Record<'debian' | ServiceImageName, string>;
  built: Partial<Record<'debian' | ServiceImageName, number>>;
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
  const source = debianSource();
  const tags = baseImageTags(source, opts.prefix);
  const recipes = names.map((name) => ({ name, tag: tags[name], labels: baseImageLabels(name, tags[name]) }));
  const built = await ensureOnDebian(opts, source, tags.debian, recipes);
  return { images: tags, built };
}

/** The same for the service images (the database engines' images), on the same Debian base and under the same lock. */
export async function ensureServiceImages(
  opts: EnsureOptions,
  names: readonly ServiceImageName[] = SERVICE_IMAGE_NAMES,
): Promise<ServiceImagesResult> {
  const source = debianSource();
  const tags = serviceImageTags(source, opts.prefix);
  const recipes = names.map((name) => ({ name, tag: tags[name], labels: serviceImageLabels(name, tags[name]) }));
  const built = await ensureOnDebian(opts, source, tags.debian, recipes);
  return { images: tags, built };
}

/** Builds what of `recipes` is missing (the Debian base first when it is), then points each one's `latest` at it. */
async function ensureOnDebian<N extends string>(
  opts: EnsureOptions,
  source: DebianSource,
  debianTag: string,
  recipes: (ImageRecipe & { name: N })[],
): Promise<Partial<Record<'debian' | N, number>>> {
  const progress = opts.progress ?? (() => undefined);
  const built: Partial<Record<'debian' | N, number>> = {};
  const missing = async () => {
    const out: (ImageRecipe & { name: N })[] = [];
    for (const r of recipes) if (await absent(opts.docker, r.tag)) out.push(r);
    return out;
  };
  progress('looking for the images on the engine');
  if ((await missing()).length > 0) {
    await withMachineLock('base-images', progress, opts.signal, async () => {
      const todo = await missing();
      if (todo.length === 0) return;
      if (await absent(opts.docker, debianTag)) {
        const t0 = Date.now();
        await importDebian(opts.docker, debianTag, source, progress, opts.signal);
        built.debian = Date.now() - t0;
      }
      for (const recipe of todo) {
        const t0 = Date.now();
        progress(`building ${recipe.tag}`);
        await buildOnDebian(opts.docker, recipe, debianTag, progress, opts.signal);
        (built as Record<string, number>)[recipe.name] = Date.now() - t0;
      }
    });
  }
  if (!(await absent(opts.docker, debianTag))) await tagLatest(opts.docker, debianTag);
  for (const r of recipes) await tagLatest(opts.docker, r.tag);
  return built;
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

/** The configuration's name of the image each database engine runs (shared/config.ts). */
export const SERVICE_VARIABLE: Record<ServiceImageName, string> = {
  postgres: 'DATABASE_IMAGE_POSTGRESQL',
  mariadb: 'DATABASE_IMAGE_MARIADB',
  redis: 'DATABASE_IMAGE_REDIS',
};

/**
 * `npm start`'s step after the engine is up: builds the bases whose BUILD_BASE_IMAGE_* and the service images whose
 * DATABASE_IMAGE_* is unset (a set one, a public image for instance, is used as is) and points the worker at their
 * content-hash tags.
 */
export function baseImagesPart(docker: () => Docker): Part {
  return {
    name: 'base images',
    async start(ctx): Promise<PartResult> {
      const bases = BASE_IMAGE_NAMES.filter((n) => !process.env[VARIABLE[n]]);
      const services = SERVICE_IMAGE_NAMES.filter((n) => !process.env[SERVICE_VARIABLE[n]]);
      if (bases.length === 0 && services.length === 0) return { env: {}, started: [], external: true };
      const t0 = Date.now();
      const opts = { docker: docker(), progress: ctx.progress, ...(ctx.signal ? { signal: ctx.signal } : {}) };
      // One after the other: both take the same machine lock, and the second finds the Debian base the first made.
      const base = bases.length > 0 ? await ensureBaseImages(opts, bases) : undefined;
      const service = services.length > 0 ? await ensureServiceImages(opts, services) : undefined;
      const built = [...Object.keys(base?.built ?? {}), ...Object.keys(service?.built ?? {})];
      ctx.progress(
        built.length > 0
          ? `built ${[...new Set(built)].join(', ')} in ${((Date.now() - t0) / 1000).toFixed(0)} s`
          : `all present (${Date.now() - t0} ms)`,
      );
      return {
        env: {
          ...Object.fromEntries(bases.map((n) => [VARIABLE[n], base!.images[n]])),
          ...Object.fromEntries(services.map((n) => [SERVICE_VARIABLE[n], service!.images[n]])),
        },
        started: [],
        external: false,
      };
    },
  };
}
