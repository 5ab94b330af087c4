import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';

import dockerignore from '@balena/dockerignore';
import tar from 'tar-fs';

import { ifAbsent } from '../ignore';

/**
 * The build context as the docker CLI sends it: every path of `dir` but those its .dockerignore excludes,
 * relative to the root, except the Dockerfile and .dockerignore themselves, which the engine must read even
 * when ignored and then leaves out of the build. Symlinks travel as links, never followed.
 */
export async function buildContext(dir: string, dockerfile: string): Promise<NodeJS.ReadableStream> {
  const rules = await fs.readFile(path.join(dir, '.dockerignore'), 'utf8').catch(ifAbsent(''));
  const ignored = dockerignore({ ignorecase: false }).add(rules);
  const keep = new Set([dockerfile, '.dockerignore']);
  const pack = tar.pack(dir, {
    ignore: (name) => {
      const rel = path.relative(dir, name).split(path.sep).join('/');
      return rel !== '' && !keep.has(rel) && ignored.ignores(rel);
    },
  });
  // tar-fs packs into a streamx stream; the engine client wants a Node one.
  return Readable.from(pack);
}
