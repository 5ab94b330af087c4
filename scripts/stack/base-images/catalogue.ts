import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { BASE_IMAGE_LABEL, BASE_IMAGE_NAMES, type BaseImageName } from '@shared/build/base-images';
import { LABELS } from '@shared/constants';

import { repoRoot } from '../paths';

/**
 * What Slipway's own images are made of and what they are called: the recipes under scripts/images, the Debian
 * suite and mirror, and the tag of each image, a hash of all of these. Read from files only, never the engine.
 * Two kinds sit on the one Debian base: the bases users' builds start from (node, python, static) and the service
 * images Slipway runs itself (postgres, mariadb, redis: the databases of an organisation).
 */
export const IMAGES_DIR = path.join(repoRoot, 'scripts', 'images');
/** Files copied over the Debian root file system after debootstrap. */
export const OVERLAY = path.join(IMAGES_DIR, 'debian', 'overlay');
export const VARIANT = 'minbase';

export type AllBases = 'debian' | BaseImageName;

/** The images of the database engines, each a directory under scripts/images with a Dockerfile and its files. */
export const SERVICE_IMAGE_NAMES = ['postgres', 'mariadb', 'redis'] as const;
export type ServiceImageName = (typeof SERVICE_IMAGE_NAMES)[number];
/** Label whose value names the service image; never the base label, so no user's build may start from one. */
export const SERVICE_IMAGE_LABEL = 'dev.slipway.service-image';

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

/** The first `…/debian` archive an apt sources file names, in the one-line or the deb822 format. */
export function debianMirrorIn(text: string): string | undefined {
  for (const m of text.matchAll(/^(?:deb\s+(?:\[[^\]]*\]\s+)?|URIs:\s*)(\S+)/gm)) {
    if (/^https?:\/\/[^\s]+\/debian\/?$/.test(m[1]!)) return m[1];
  }
  return undefined;
}

/** The first `…/debian` archive in the host's apt sources. */
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
    const mirror = debianMirrorIn(text);
    if (mirror) return mirror;
  }
  return undefined;
}

const sha = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex').slice(0, 12);

/** Every file under `dir` with its text, as `[relative path, text]`, in a stable order. */
export function filesUnder(dir: string, rel = ''): [string, string][] {
  return fs
    .readdirSync(path.join(dir, rel), { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((e): [string, string][] => {
      const r = path.posix.join(rel, e.name);
      return e.isDirectory() ? filesUnder(dir, r) : [[r, fs.readFileSync(path.join(dir, r), 'utf8')]];
    });
}

const dockerfileOf = (name: BaseImageName) => fs.readFileSync(path.join(IMAGES_DIR, name, 'Dockerfile'), 'utf8');

const debianTag = (source: DebianSource, prefix: string) =>
  `${prefix}/debian:${sha({ ...source, variant: VARIANT, overlay: filesUnder(OVERLAY) })}`;

/** Each base's tag, from the hash of everything that goes into it: computed without the engine. */
export function baseImageTags(source: DebianSource = debianSource(), prefix = 'slipway'): Record<AllBases, string> {
  const debian = debianTag(source, prefix);
  const tags = { debian } as Record<AllBases, string>;
  for (const name of BASE_IMAGE_NAMES)
    tags[name] = `${prefix}/${name}:${sha({ name, from: debian, dockerfile: dockerfileOf(name) })}`;
  return tags;
}

/**
 * Each service image's tag, and the Debian base's it is built on: a hash of the base's tag and of every file of its
 * directory (the Dockerfile and the entrypoint it copies), so editing either makes a new image.
 */
export function serviceImageTags(
  source: DebianSource = debianSource(),
  prefix = 'slipway',
): Record<'debian' | ServiceImageName, string> {
  const debian = debianTag(source, prefix);
  const tags = { debian } as Record<'debian' | ServiceImageName, string>;
  for (const name of SERVICE_IMAGE_NAMES)
    tags[name] = `${prefix}/${name}:${sha({ name, from: debian, files: filesUnder(path.join(IMAGES_DIR, name)) })}`;
  return tags;
}

/** A service image's labels: Slipway's own, of no organisation, and not a base a user's Dockerfile may name. */
export const serviceImageLabels = (name: ServiceImageName, tag: string) => ({
  [LABELS.managed]: 'true',
  [SERVICE_IMAGE_LABEL]: name,
  'dev.slipway.service-image.tag': tag,
});

/** The labels of every base: Slipway's, usable by every organisation (no organisation label), and its own tag. */
export const baseImageLabels = (name: AllBases, tag: string) => ({
  [LABELS.managed]: 'true',
  [BASE_IMAGE_LABEL]: name,
  'dev.slipway.base-image.tag': tag,
});
