import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  baseImageLabels,
  baseImageTags,
  debianMirrorIn,
  debianSource,
  filesUnder,
  IMAGES_DIR,
  SERVICE_IMAGE_LABEL,
  SERVICE_IMAGE_NAMES,
  serviceImageLabels,
  serviceImageTags,
} from '@scripts/stack/base-images/catalogue';
import { aptSources } from '@scripts/stack/base-images/rootfs';
import { BASE_IMAGE_LABEL } from '@shared/build/base-images';
import { LABELS } from '@shared/constants';

const trixie = { suite: 'trixie', mirror: 'http://deb.debian.org/debian' };

describe('base image catalogue', () => {
  it('tags every base by a hash of its inputs, the same on every run', () => {
    const tags = baseImageTags(trixie);
    expect(Object.keys(tags).sort()).toEqual(['debian', 'node', 'python', 'static']);
    for (const [name, tag] of Object.entries(tags)) expect(tag).toMatch(new RegExp(`^slipway/${name}:[0-9a-f]{12}$`));
    expect(baseImageTags(trixie)).toEqual(tags);
  });

  it('rebuilds every base on another Debian suite or mirror, since each is built on the Debian one', () => {
    const tags = baseImageTags(trixie);
    for (const source of [
      { ...trixie, suite: 'bookworm' },
      { ...trixie, mirror: 'http://mirror.example/debian' },
    ]) {
      const other = baseImageTags(source);
      for (const name of ['debian', 'node', 'python', 'static'] as const) expect(other[name]).not.toBe(tags[name]);
    }
  });

  it('puts the bases of another prefix in their own repositories, built on their own Debian base', () => {
    const ours = baseImageTags(trixie);
    const bench = baseImageTags(trixie, 'bench');
    // The same root file system, so the same hash...
    expect(bench.debian).toBe(ours.debian.replace(/^slipway\//, 'bench/'));
    // ...but the others name their Debian base, and so differ.
    expect(bench.node).toMatch(/^bench\/node:/);
    expect(bench.node.split(':')[1]).not.toBe(ours.node.split(':')[1]);
  });

  it('labels a base as Slipway’s own, usable by every organisation', () => {
    expect(baseImageLabels('node', 'slipway/node:abc')).toEqual({
      [LABELS.managed]: 'true',
      [BASE_IMAGE_LABEL]: 'node',
      'dev.slipway.base-image.tag': 'slipway/node:abc',
    });
    expect(baseImageLabels('node', 'x')).not.toHaveProperty(LABELS.orgId);
  });
});

describe('service image catalogue', () => {
  it('tags the database images by a hash of their inputs, on the same Debian base as the bases', () => {
    const tags = serviceImageTags(trixie);
    expect(Object.keys(tags).sort()).toEqual(['debian', 'mariadb', 'postgres', 'redis']);
    for (const [name, tag] of Object.entries(tags)) expect(tag).toMatch(new RegExp(`^slipway/${name}:[0-9a-f]{12}$`));
    expect(tags.debian).toBe(baseImageTags(trixie).debian);
    expect(serviceImageTags(trixie)).toEqual(tags);
    expect(serviceImageTags({ ...trixie, suite: 'bookworm' }).postgres).not.toBe(tags.postgres);
    expect(serviceImageTags(trixie, 'bench').redis).toMatch(/^bench\/redis:/);
  });

  it('has a Dockerfile and an executable entrypoint for each engine, and hashes every file of the recipe', () => {
    for (const name of SERVICE_IMAGE_NAMES) {
      const files = filesUnder(path.join(IMAGES_DIR, name)).map(([rel]) => rel);
      expect(files).toEqual(expect.arrayContaining(['Dockerfile', 'entrypoint.sh']));
      expect(fs.statSync(path.join(IMAGES_DIR, name, 'entrypoint.sh')).mode & 0o111).toBe(0o111);
    }
  });

  it('makes a new tag when the entrypoint changes, not only the Dockerfile', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-images-'));
    const copy = path.join(dir, 'redis');
    fs.cpSync(path.join(IMAGES_DIR, 'redis'), copy, { recursive: true });
    const before = filesUnder(copy);
    fs.appendFileSync(path.join(copy, 'entrypoint.sh'), '# changed\n');
    expect(filesUnder(copy)).not.toEqual(before);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('labels a service image as Slipway’s own, of no organisation, and never as a base users may build on', () => {
    const labels = serviceImageLabels('postgres', 'slipway/postgres:abc');
    expect(labels).toEqual({
      [LABELS.managed]: 'true',
      [SERVICE_IMAGE_LABEL]: 'postgres',
      'dev.slipway.service-image.tag': 'slipway/postgres:abc',
    });
    expect(labels).not.toHaveProperty(BASE_IMAGE_LABEL);
    expect(labels).not.toHaveProperty(LABELS.orgId);
  });
});

describe('Debian source', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('takes the suite and mirror from the environment, without a trailing slash', () => {
    process.env.SLIPWAY_DEBIAN_SUITE = 'bookworm';
    process.env.SLIPWAY_DEBIAN_MIRROR = 'http://mirror.example/debian//';
    expect(debianSource()).toEqual({ suite: 'bookworm', mirror: 'http://mirror.example/debian' });
  });

  it('defaults to trixie from some Debian archive', () => {
    delete process.env.SLIPWAY_DEBIAN_SUITE;
    delete process.env.SLIPWAY_DEBIAN_MIRROR;
    const source = debianSource();
    expect(source.suite).toBe('trixie');
    expect(source.mirror).toMatch(/^https?:\/\/\S+\/debian$/);
  });

  it('finds the Debian archive an apt sources file names, in either format', () => {
    expect(debianMirrorIn('# a comment\ndeb http://ftp.fr.debian.org/debian trixie main\n')).toBe(
      'http://ftp.fr.debian.org/debian',
    );
    expect(debianMirrorIn('deb [arch=amd64 signed-by=/k.gpg] https://mirror.example/debian/ trixie main')).toBe(
      'https://mirror.example/debian/',
    );
    expect(
      debianMirrorIn(
        'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: trixie trixie-updates\nComponents: main\n',
      ),
    ).toBe('http://deb.debian.org/debian');
  });

  it('passes over archives that are not Debian’s main one', () => {
    expect(debianMirrorIn('deb http://archive.ubuntu.com/ubuntu noble main')).toBeUndefined();
    expect(debianMirrorIn('deb http://security.debian.org/debian-security trixie-security main')).toBeUndefined();
    expect(debianMirrorIn('# deb http://deb.debian.org/debian trixie main')).toBeUndefined();
    expect(debianMirrorIn('deb-src http://deb.debian.org/debian trixie main')).toBeUndefined();
    expect(debianMirrorIn('')).toBeUndefined();
  });

  it("points the base's apt at the suite, its updates and, on Debian's layout, its security archive", () => {
    expect(aptSources(trixie)).toBe(
      [
        'deb http://deb.debian.org/debian trixie main',
        'deb http://deb.debian.org/debian trixie-updates main',
        'deb http://deb.debian.org/debian-security trixie-security main',
        '',
      ].join('\n'),
    );
    expect(aptSources({ suite: 'trixie', mirror: 'http://cache.internal/deb' })).toBe(
      'deb http://cache.internal/deb trixie main\ndeb http://cache.internal/deb trixie-updates main\n',
    );
  });
});
