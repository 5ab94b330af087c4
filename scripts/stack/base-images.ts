import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';

import type Docker from 'dockerode';

import { BASE_IMAGE_LABEL, BASE_IMAGE_NAMES, type BaseImageName } from '../../shared/build/base-images';
import { LABELS } from '../../shared/constants';
import { ifAbsent } from '../../shared/ignore';
import { ensureDebianPackages } from './debian';
import { withMachineLock } from './machine-lock';
import type { Part, PartResult } from './parts';
import { cacheDir, repoRoot } from './paths';
import { StackError } from './stack-error';

export { BASE_IMAGE_NAMES, type BaseImageName } from '../../shared/build/base-images';

/**
 * Slipway's base images, built on this machine because no container registry is reachable (docs/architecture.md,
 * "Builds and images"): a Debian minbase made by debootstrap and imported once, then one ordinary Dockerfile per base
 * on top of it. Every image is tagged by a hash of its inputs (and `latest`), so a second run finds them in a second.
 */
const IMAGES_DIR = path.join(repoRoot, 'scripts', 'images');
const OVERLAY = path.join(IMAGES_DIR, 'debian', 'overlay');
const VARIANT = 'minbase';

export type AllBases = 'debian' | BaseImageName;

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

export interface DebianSource {
  suite: string;
  mirror: string;
}

/**
 * The suite and mirror the Debian base comes from: SLIPWAY_DEBIAN_SUITE (trixie: Node 20, Python 3.13) and
 * SLIPWAY_DEBIAN_MIRROR, else the Debian archive the host's own apt sources name, else deb.debian.org.
 */
export function debianSource(): DebianSource {
  const suite = process.env.SLIPWAY_DEBIAN_SUITE || 'trixie';
  const mirror = process.env.SLIPWAY_DEBIAN_MIRROR || hostDebianMirror() || 'http://deb.debian.org/debian';
  return { suite, mirror: mirror.replace(/\/+$/, '') };
}

/** The first `…/debian` archive in the host's apt sources (one-line and deb822 formats). */
function hostDebianMirror(): string | undefined {
  const files = ['/etc/apt/sources.list'];
  try {
    for (const f of fs.readdirSync('/etc/apt/sources.list.d')) files.push(path.join('/etc/apt/sources.list.d', f));
  } catch {
    // no sources.list.d: not a Debian host, the default mirror it is
  }
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue; // deb822-only hosts have no sources.list: the next file may name the mirror
    }
    for (const m of text.matchAll(/^(?:deb\s+(?:\[[^\]]*\]\s+)?|URIs:\s*)(\S+)/gm)) {
      if (/^https?:\/\/[^\s]+\/debian\/?$/.test(m[1]!)) return m[1];
    }
  }
  return undefined;
}

const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 12);

function filesUnder(dir: string, rel = ''): [string, string][] {
  return fs
    .readdirSync(path.join(dir, rel), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e): [string, string][] => {
      const r = path.posix.join(rel, e.name);
      return e.isDirectory() ? filesUnder(dir, r) : [[r, fs.readFileSync(path.join(dir, r), 'utf8')]];
    });
}

const dockerfileOf = (name: BaseImageName) => fs.readFileSync(path.join(IMAGES_DIR, name, 'Dockerfile'), 'utf8');

/** Each base's tag, from the hash of everything that goes into it: computed without the engine. */
export function baseImageTags(source: DebianSource = debianSource(), prefix = 'slipway'): Record<AllBases, string> {
  const debian = `${prefix}/debian:${sha({ ...source, variant: VARIANT, overlay: filesUnder(OVERLAY) })}`;
  const tags = { debian } as Record<AllBases, string>;
  for (const name of BASE_IMAGE_NAMES)
    tags[name] = `${prefix}/${name}:${sha({ name, from: debian, dockerfile: dockerfileOf(name) })}`;
  return tags;
}

/** The engine's image of that name, or undefined when it has none (404); any other failure is thrown. */
const inspectIfPresent = (docker: Docker, tag: string) =>
  docker
    .getImage(tag)
    .inspect()
    .catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return undefined;
      throw err;
    });

const absent = async (docker: Docker, tag: string) => (await inspectIfPresent(docker, tag)) === undefined;

/** Points `<repo>:latest` at `tag`, so a user's Dockerfile can say `FROM slipway/node`. */
async function tagLatest(docker: Docker, tag: string): Promise<void> {
  const [repo] = tag.split(':');
  const [want, latest] = await Promise.all([
    docker.getImage(tag).inspect(),
    inspectIfPresent(docker, `${repo}:latest`),
  ]);
  if (latest?.Id !== want.Id) await docker.getImage(tag).tag({ repo: repo!, tag: 'latest' });
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

const labels = (name: AllBases, tag: string) => ({
  [LABELS.managed]: 'true',
  [BASE_IMAGE_LABEL]: name,
  'dev.slipway.base-image.tag': tag,
});

/** debootstrap into a scratch directory, then `tar | docker import`; the directory is removed either way. */
async function importDebian(
  docker: Docker,
  tag: string,
  source: DebianSource,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new StackError(
      "building Slipway's Debian base needs root once (debootstrap); run npm start as root, or set BUILD_BASE_IMAGE_NODE, BUILD_BASE_IMAGE_PYTHON and BUILD_BASE_IMAGE_STATIC to images your engine has",
    );
  }
  await ensureDebianPackages(['debootstrap'], "Slipway's Debian base image", progress);
  const root = path.join(cacheDir(), `debian-rootfs-${process.pid}`);
  await fs.promises.rm(root, { recursive: true, force: true });
  await fs.promises.mkdir(path.dirname(root), { recursive: true });
  try {
    progress(`debootstrap --variant=${VARIANT} ${source.suite} from ${source.mirror} (about a minute)`);
    await runLogged(
      'debootstrap',
      [`--variant=${VARIANT}`, '--components=main', source.suite, root, source.mirror],
      (line) => line.startsWith('I: ') && progress(`debootstrap: ${line.slice(3)}`),
      signal,
    );
    for (const [rel, content] of filesUnder(OVERLAY)) {
      await fs.promises.mkdir(path.dirname(path.join(root, rel)), { recursive: true });
      await fs.promises.writeFile(path.join(root, rel), content);
    }
    const security = source.mirror.endsWith('/debian') ? `${source.mirror}-security` : undefined;
    const lists = [
      `deb ${source.mirror} ${source.suite} main`,
      `deb ${source.mirror} ${source.suite}-updates main`,
      ...(security ? [`deb ${security} ${source.suite}-security main`] : []),
    ];
    await fs.promises.writeFile(path.join(root, 'etc/apt/sources.list'), `${lists.join('\n')}\n`);
    // The archives debootstrap fetched and its package lists: every Dockerfile on top runs apt-get update itself.
    for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists']) {
      for (const f of await fs.promises.readdir(path.join(root, dir)).catch(ifAbsent([] as string[])))
        if (f !== 'partial' && f !== 'lock')
          await fs.promises.rm(path.join(root, dir, f), { recursive: true, force: true });
    }
    progress(`importing the root file system as ${tag}`);
    const tar = spawn('tar', ['--numeric-owner', '-C', root, '-c', '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const changes = [
      ...Object.entries(labels('debian', tag)).map(([k, v]) => `LABEL ${JSON.stringify(k)}=${JSON.stringify(v)}`),
      'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8',
      'CMD ["bash"]',
    ];
    const [repo, version] = tag.split(':');
    const stream = (await docker.importImage(tar.stdout as unknown as string, {
      repo,
      tag: version,
      changes,
      ...(signal ? { abortSignal: signal } : {}),
    })) as Readable;
    await follow(docker, stream, () => undefined, `importing ${tag}`);
  } finally {
    await fs.promises.rm(root, { recursive: true, force: true });
  }
}

async function buildBase(
  docker: Docker,
  name: BaseImageName,
  tags: Record<AllBases, string>,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  const stream = await docker.buildImage(
    { context: path.join(IMAGES_DIR, name), src: ['Dockerfile'] },
    {
      t: tags[name],
      buildargs: { BASE: tags.debian },
      labels: labels(name, tags[name]),
      rm: true,
      forcerm: true,
      ...(signal ? { abortSignal: signal } : {}),
    },
  );
  await follow(docker, stream, (line) => progress(`${name}: ${line}`), `building ${tags[name]}`);
}

/** Follows an engine progress stream to its end; an `error` in it rejects with the engine's words (a script). */
function follow(docker: Docker, stream: NodeJS.ReadableStream, line: (l: string) => void, what: string) {
  return new Promise<void>((resolve, reject) => {
    let failed: string | undefined;
    docker.modem.followProgress(
      stream,
      (err) => {
        const why = err instanceof Error ? err.message : (err as string | null) || failed;
        if (why) reject(new StackError(`${what} failed: ${why}`));
        else resolve();
      },
      (msg: { stream?: string; status?: string; error?: string }) => {
        if (msg.error) failed = msg.error;
        const text = (msg.stream ?? '').trim();
        if (text) for (const l of text.split('\n')) if (l.trim()) line(l.trim());
      },
    );
  });
}

function runLogged(cmd: string, args: string[], line: (l: string) => void, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(signal ? { signal } : {}) });
    const tail: string[] = [];
    const take = (chunk: Buffer) => {
      for (const l of chunk.toString().split('\n')) {
        if (!l.trim()) continue;
        line(l);
        tail.push(l);
        if (tail.length > 5) tail.shift();
      }
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.once('error', (err) => reject(new StackError(`${cmd} could not run: ${err.message}`)));
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new StackError(`${cmd} failed (exit ${code}): ${tail.join(' | ')}`)),
    );
  });
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
