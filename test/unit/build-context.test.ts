import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';

import tar from 'tar-fs';

import { buildContext } from '@shared/build/context';

describe('buildContext', () => {
  let dir: string;
  let out: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-context-'));
    out = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-context-out-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
    await fs.rm(out, { recursive: true, force: true });
  });

  const files = async (root: string): Promise<string[]> =>
    (await fs.readdir(root, { recursive: true, withFileTypes: true }))
      .filter((e) => !e.isDirectory())
      .map((e) => path.relative(root, path.join(e.parentPath, e.name)))
      .sort();

  it('sends what .dockerignore keeps, nested patterns and exceptions included, plus the Dockerfile and .dockerignore', async () => {
    const write = async (name: string, content = name) => {
      await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
      await fs.writeFile(path.join(dir, name), content);
    };
    await write('.dockerignore', 'node_modules\nlogs/*.log\n!logs/keep.log\n*.secret\nbuild.Dockerfile\n');
    await write('build.Dockerfile', 'FROM x');
    await write('src/app.js');
    await write('node_modules/dep/index.js');
    await write('logs/a.log');
    await write('logs/keep.log');
    await write('api.secret');
    await fs.symlink('src/app.js', path.join(dir, 'main.js'));

    await pipeline(await buildContext(dir, 'build.Dockerfile'), tar.extract(out));
    expect(await files(out)).toEqual(['.dockerignore', 'build.Dockerfile', 'logs/keep.log', 'main.js', 'src/app.js']);
    expect(await fs.readlink(path.join(out, 'main.js'))).toBe('src/app.js');
  });
});
