import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { planBuild } from '@shared/build/detect';
import { LABELLED_DOCKERFILE, labelledDockerfile } from '@shared/build/labelled-dockerfile';
import { assertSymlinksInside, SymlinkEscapeError, writeOwnFile } from '@shared/build/symlinks';

describe('symlinks in a source tree', () => {
  let outer: string;
  let dir: string;
  beforeEach(async () => {
    outer = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-links-'));
    dir = path.join(outer, 'src');
    await fs.mkdir(path.join(dir, 'd'), { recursive: true });
    await fs.writeFile(path.join(outer, 'secret'), 'host file\n');
  });
  afterEach(() => fs.rm(outer, { recursive: true, force: true }));

  const link = (at: string, to: string) => fs.symlink(to, path.join(dir, at));

  it('accepts links that stay inside, dangling ones too', async () => {
    await fs.writeFile(path.join(dir, 'd', 'a.txt'), 'a');
    await link('d/b.txt', 'a.txt');
    await link('d/up', '..');
    await link('d/c.txt', '../d/a.txt');
    await link('later', 'dist/app.js');
    await expect(assertSymlinksInside(dir)).resolves.toBeUndefined();
  });

  it.each([
    ['an absolute target', 'x', '/etc/passwd'],
    ['a relative target above the root', 'x', '../secret'],
    ['a dangling target above the root', 'x', '../missing/file'],
  ])('refuses %s, naming the link', async (_what, at, to) => {
    await link(at, to);
    await expect(assertSymlinksInside(dir)).rejects.toThrow(
      new SymlinkEscapeError(
        `${at} is a symlink to ${JSON.stringify(to)}, which leads outside the source; remove it or point it inside`,
      ),
    );
  });

  it('follows a chain as the kernel does: `..` after a link climbs from its target', async () => {
    await link('d/l', '..'); // the root: inside
    await link('x', 'd/l/../secret'); // reads as d/secret, but is ../secret
    await expect(assertSymlinksInside(dir)).rejects.toThrow(/^x is a symlink to "d\/l\/..\/secret"/);
  });

  it('refuses a link loop', async () => {
    await link('a', 'b');
    await link('b', 'a');
    await expect(assertSymlinksInside(dir)).rejects.toThrow(SymlinkEscapeError);
  });

  it('replaces a symlink with our own file instead of writing through it', async () => {
    await link('.dockerignore', '../secret');
    await writeOwnFile(path.join(dir, '.dockerignore'), 'ours\n');
    expect(await fs.readFile(path.join(outer, 'secret'), 'utf8')).toBe('host file\n');
    expect((await fs.lstat(path.join(dir, '.dockerignore'))).isFile()).toBe(true);
  });

  it('never writes the generated Dockerfile through a dangling link', async () => {
    await fs.writeFile(path.join(dir, 'index.html'), '<p>hi</p>');
    await link('Dockerfile.slipway', '../planted');
    const plan = await planBuild(dir, {
      port: 8080,
      baseImages: { node: 'n', static: 's', python: 'p' },
    });
    expect(plan.dockerfile).toBe('Dockerfile.slipway-2');
    await expect(fs.stat(path.join(outer, 'planted'))).rejects.toThrow();
  });
});

describe('labelledDockerfile', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-labels-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('appends one LABEL line to a copy and keeps the copy out of the build context', async () => {
    await fs.mkdir(path.join(dir, 'docker'));
    await fs.writeFile(path.join(dir, 'docker', 'app.Dockerfile'), 'FROM a AS build\n\nFROM b\nCMD ["x"]\n\n');
    await fs.writeFile(path.join(dir, '.dockerignore'), '*\n!src');
    const name = await labelledDockerfile(dir, 'docker/app.Dockerfile', { 'dev.x': '1', 'dev.y': 'two words' });
    expect(name).toBe(LABELLED_DOCKERFILE);
    expect(await fs.readFile(path.join(dir, name), 'utf8')).toBe(
      'FROM a AS build\n\nFROM b\nCMD ["x"]\nLABEL "dev.x"="1" "dev.y"="two words"\n',
    );
    expect(await fs.readFile(path.join(dir, 'docker', 'app.Dockerfile'), 'utf8')).toBe(
      'FROM a AS build\n\nFROM b\nCMD ["x"]\n\n',
    );
    expect(await fs.readFile(path.join(dir, '.dockerignore'), 'utf8')).toBe(`*\n!src\n${LABELLED_DOCKERFILE}\n`);
  });

  it('creates .dockerignore when the source has none', async () => {
    await fs.writeFile(path.join(dir, 'Dockerfile'), 'FROM a');
    await labelledDockerfile(dir, 'Dockerfile', { k: 'v' });
    expect(await fs.readFile(path.join(dir, '.dockerignore'), 'utf8')).toBe(`${LABELLED_DOCKERFILE}\n`);
  });
});
