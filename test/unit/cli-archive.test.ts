import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import yauzl from 'yauzl';

import { packDirectory } from '@cli/archive';
import { printable } from '@cli/view';

async function tree(files: Record<string, string>): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-cli-pack-'));
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), content);
  }
  return dir;
}

/** The names inside a zip, read back by the same reader the server extracts with. */
function entries(zip: Buffer): Promise<string[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(zip, { lazyEntries: true }, (err, z) => {
      if (err) return reject(err);
      const names: string[] = [];
      z.on('entry', (e: yauzl.Entry) => {
        names.push(e.fileName);
        z.readEntry();
      });
      z.on('end', () => resolve(names.sort()));
      z.on('error', reject);
      z.readEntry();
    });
  });
}

describe('slipway deploy --dir: what leaves the machine', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const d of dirs) await fs.rm(d, { recursive: true, force: true });
  });

  it('leaves out .git, what .gitignore files exclude (nested ones and negations too) and what .dockerignore excludes', async () => {
    const dir = await tree({
      'index.html': 'hi',
      '.env': 'SECRET=1',
      '.gitignore': '.env\nnode_modules/\n*.log\n!keep.log\n',
      '.dockerignore': 'drafts\n**/*.psd\n',
      'app.log': 'x',
      'keep.log': 'kept',
      'node_modules/dep/index.js': 'x',
      'drafts/post.html': 'draft',
      'assets/logo.psd': 'x',
      'assets/logo.png': 'png',
      'assets/.gitignore': 'private/\n',
      'assets/private/key.pem': 'k',
      'lib/private/ok.txt': 'a nested .gitignore applies only under its own directory',
      '.git/config': '[core]',
      Dockerfile: 'FROM scratch',
    });
    dirs.push(dir);
    await fs.symlink('/etc/passwd', path.join(dir, 'passwd-link'));
    const packed = await packDirectory(dir);
    expect(await entries(packed.zip)).toEqual([
      '.dockerignore',
      '.gitignore',
      'Dockerfile',
      'assets/.gitignore',
      'assets/logo.png',
      'index.html',
      'keep.log',
      'lib/private/ok.txt',
    ]);
    expect(packed.skipped).toEqual(['passwd-link']);
  });

  it('keeps files a .dockerignore exception brings back', async () => {
    const dir = await tree({ 'docs/a.md': 'a', 'docs/readme.md': 'r', '.dockerignore': 'docs\n!docs/readme.md\n' });
    dirs.push(dir);
    expect(await entries((await packDirectory(dir)).zip)).toEqual(['.dockerignore', 'docs/readme.md']);
  });

  it('refuses a path that is not a directory, naming it', async () => {
    await expect(packDirectory('/nonexistent/slipway-site')).rejects.toThrow(
      '/nonexistent/slipway-site is not a directory',
    );
  });
});

describe('text from deployments printed on a terminal', () => {
  it('drops escape sequences and control characters, keeping the words', () => {
    expect(printable('\u001b[2J\u001b[Hok \u001b]0;pwned\u0007done\r\u0008!')).toBe('ok done  !');
  });
});
