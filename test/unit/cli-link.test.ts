import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { packDirectory } from '@cli/archive';
import { rollbackArgs, scaleArgs } from '@cli/commands/control';
import { baseNameOf, envChange, nameFrom } from '@cli/commands/source';
import { CliError } from '@cli/errors';
import { ignoresLink, linkFile, readLink, removeLink, writeLink } from '@cli/link';
import { pickByName } from '@cli/target';
import type { DeploymentView } from '@cli/view';

const link = { deploymentId: '3f2b0c1e-1111-4222-8333-444455556666', name: 'site', apiUrl: 'http://localhost:3000' };

describe('the folder link (.slipway/app.json)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-link-'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('reads back what was written: the deployment, its name and its API, and nothing else', async () => {
    expect(await readLink(dir)).toBeUndefined();
    await writeLink(dir, { ...link, token: 'svc_secret' } as typeof link);
    expect(await readLink(dir)).toEqual(link);
    const text = await fs.readFile(linkFile(dir), 'utf8');
    expect(JSON.parse(text)).toEqual(link);
    expect(text).not.toContain('svc_');
    // Written through a temporary file renamed into place: nothing else is left in the folder.
    expect(await fs.readdir(path.join(dir, '.slipway'))).toEqual(['app.json']);
  });

  it('adds .slipway/ to the .gitignore and .dockerignore the folder has, once, and creates neither', async () => {
    expect((await writeLink(dir, link)).ignoredIn).toEqual([]);
    await expect(fs.stat(path.join(dir, '.gitignore'))).rejects.toThrow('ENOENT');
    await expect(fs.stat(path.join(dir, '.dockerignore'))).rejects.toThrow('ENOENT');

    await fs.writeFile(path.join(dir, '.gitignore'), 'node_modules');
    await fs.writeFile(path.join(dir, '.dockerignore'), '.git\n');
    expect((await writeLink(dir, link)).ignoredIn).toEqual(['.gitignore', '.dockerignore']);
    const gitignore = await fs.readFile(path.join(dir, '.gitignore'), 'utf8');
    // The last rule had no newline: it is not glued to ours.
    expect(gitignore.split('\n')).toEqual(expect.arrayContaining(['node_modules', '.slipway/']));
    expect(await fs.readFile(path.join(dir, '.dockerignore'), 'utf8')).toMatch(/^\.git\n(#.*\n)?\.slipway\/\n$/);

    expect((await writeLink(dir, link)).ignoredIn).toEqual([]);
    expect((await fs.readFile(path.join(dir, '.gitignore'), 'utf8')).match(/\.slipway\//g)).toHaveLength(1);
  });

  it('knows rules that already leave the link out, by git’s and Docker’s own matching', () => {
    for (const rules of ['.slipway/', '.slipway', '/.slipway', '.*', '.slipway/*\n'])
      expect(ignoresLink('.gitignore', rules)).toBe(true);
    expect(ignoresLink('.gitignore', 'node_modules\n.env\n')).toBe(false);
    // Re-included: git can (its folder is not excluded, only what is in it).
    expect(ignoresLink('.gitignore', '.slipway/*\n!.slipway/app.json\n')).toBe(false);
    for (const rules of ['.slipway', '.slipway/', '.*']) expect(ignoresLink('.dockerignore', rules)).toBe(true);
    expect(ignoresLink('.dockerignore', 'node_modules\n')).toBe(false);
  });

  it('refuses a file that is not a link, naming it and how to mend it; unlink still removes it', async () => {
    await fs.mkdir(path.join(dir, '.slipway'));
    for (const bad of ['{not json', '{"deploymentId":"x","name":"site","apiUrl":"http://a"}', '[]']) {
      await fs.writeFile(linkFile(dir), bad);
      const err = await readLink(dir).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CliError);
      expect((err as CliError).message).toContain(linkFile(dir));
      expect((err as CliError).next).toContain('slipway unlink');
    }
    expect(await removeLink(dir)).toEqual({ file: linkFile(dir) });
    await expect(fs.stat(path.join(dir, '.slipway'))).rejects.toThrow('ENOENT');
  });

  it('unlink removes the link and the empty folder, says what it was linked to, and is a no-op after', async () => {
    await writeLink(dir, link);
    expect(await removeLink(dir)).toEqual({ file: linkFile(dir), link });
    await expect(fs.stat(path.join(dir, '.slipway'))).rejects.toThrow('ENOENT');
    expect(await removeLink(dir)).toBeUndefined();
  });

  it('never uploads .slipway/, even in a folder with no ignore file', async () => {
    await fs.writeFile(path.join(dir, 'index.html'), 'hi');
    await writeLink(dir, link);
    const packed = await packDirectory(dir);
    expect(packed.files).toEqual(['index.html']);
  });
});

const view = (name: string, id: string, createdAt = '2026-01-01T00:00:00.000Z'): DeploymentView => ({
  id,
  name,
  status: 'running',
  source: { type: 'image' },
  port: 8080,
  url: `http://${name}.localhost`,
  createdAt,
});

describe('a deployment named on the command line', () => {
  const a = view('site', '00000000-0000-4000-8000-00000000000a', '2026-01-02T00:00:00.000Z');
  const b = view('site', '00000000-0000-4000-8000-00000000000b');
  const c = view('api', '00000000-0000-4000-8000-00000000000c');

  it('is the one deployment of that name', () => {
    expect(pickByName('api', [a, c]).id).toBe(c.id);
  });

  it('is refused when no deployment has it, with where names are listed', () => {
    expect(() => pickByName('nope', [a, c])).toThrow(expect.objectContaining({ message: 'no deployment named nope' }));
    expect(() => pickByName('nope', [])).toThrow(
      expect.objectContaining({ next: expect.stringContaining('slipway list') }),
    );
  });

  it('is refused when several share it, each listed with what tells them apart', () => {
    const err = (() => {
      try {
        pickByName('site', [a, c, b]);
      } catch (e) {
        return e as CliError;
      }
    })();
    expect(err?.message).toContain('2 deployments are named site');
    expect(err?.message).toContain(a.id);
    expect(err?.message).toContain(b.id);
    expect(err?.message).not.toContain(c.id);
    expect(err?.next).toBe('give the ID of the one you mean');
    expect(err?.json).toMatchObject({ candidates: [{ id: a.id }, { id: b.id }] });
  });
});

describe('command arguments', () => {
  it('rollback: a lone revision is the linked deployment’s; two arguments are the deployment and the revision', () => {
    expect(rollbackArgs(undefined, undefined, undefined)).toEqual({});
    expect(rollbackArgs('3', undefined, undefined)).toEqual({ revision: 3 });
    expect(rollbackArgs('r3', undefined, undefined)).toEqual({ revision: 3 });
    expect(rollbackArgs('site', undefined, undefined)).toEqual({ given: 'site' });
    expect(rollbackArgs('site', 'r2', undefined)).toEqual({ given: 'site', revision: 2 });
    expect(rollbackArgs('site', undefined, '4')).toEqual({ given: 'site', revision: 4 });
    expect(() => rollbackArgs('3', undefined, '4')).toThrow('give the revision once');
    expect(() => rollbackArgs('site', 'latest', undefined)).toThrow('latest is not a revision');
    expect(() => rollbackArgs('r0', undefined, undefined)).toThrow('r0 is not a revision');
  });

  it('scale: one argument is the number, two are the deployment and the number', () => {
    expect(scaleArgs('2', undefined)).toEqual({ replicas: 2 });
    expect(scaleArgs('site', '0')).toEqual({ given: 'site', replicas: 0 });
    expect(() => scaleArgs(undefined, undefined)).toThrow('give the number of instances');
    expect(() => scaleArgs('site', undefined)).toThrow('site is not a number of instances');
  });

  it('a default name is the folder’s, image’s or repository’s, made a DNS label', () => {
    expect(nameFrom('My_App (copy)')).toBe('my-app-copy');
    expect(nameFrom('---')).toBeUndefined();
    expect(nameFrom('x'.repeat(70))).toHaveLength(63);
    expect(baseNameOf({ folder: '/home/me/Shop-Site' })).toBe('Shop-Site');
    expect(baseNameOf({ folder: '/x', image: 'registry.example.com:5000/team/web:2@sha256:abc' })).toBe('web');
    expect(baseNameOf({ folder: '/x', git: 'https://git.example.com/acme/app.git/' })).toBe('app');
  });

  it('a new environment says which names it removes, never a value', () => {
    expect(envChange(['A', 'B', 'SECRET'], ['A', 'C'])).toBe(
      'the environment is replaced by A, C (removed: B, SECRET)',
    );
    expect(envChange([], ['A'])).toBe('the environment is replaced by A (nothing removed)');
  });
});
