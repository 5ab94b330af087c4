import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { ifAbsent } from '@shared/ignore';

import { ensureDebianPackages } from '../debian';
import { StackError } from '../stack-error';
import { type DebianSource, filesUnder, OVERLAY, VARIANT } from './catalogue';

/**
 * Makes the Debian base's root file system in `root` with debootstrap (root only, once per machine), then lays the
 * overlay over it and points apt at the suite's archives. What comes out is what `docker import` takes as is.
 */
export async function debootstrapRootfs(
  root: string,
  source: DebianSource,
  progress: (line: string) => void,
  signal?: AbortSignal,
): Promise<void> {
  if (process.getuid?.() !== 0) {
    throw new StackError(
      "building Slipway's Debian base needs root once (debootstrap); run npm start as root, or set BUILD_BASE_IMAGE_NODE, BUILD_BASE_IMAGE_PYTHON, BUILD_BASE_IMAGE_STATIC and DATABASE_IMAGE_POSTGRESQL, DATABASE_IMAGE_MARIADB, DATABASE_IMAGE_REDIS to images your engine has",
    );
  }
  await ensureDebianPackages(['debootstrap'], "Slipway's Debian base image", progress);
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
  await fs.promises.writeFile(path.join(root, 'etc/apt/sources.list'), aptSources(source));
  // The archives debootstrap fetched and its package lists: every Dockerfile on top runs apt-get update itself.
  for (const dir of ['var/cache/apt/archives', 'var/lib/apt/lists']) {
    for (const f of await fs.promises.readdir(path.join(root, dir)).catch(ifAbsent([] as string[])))
      if (f !== 'partial' && f !== 'lock')
        await fs.promises.rm(path.join(root, dir, f), { recursive: true, force: true });
  }
}

/** The base's sources.list: the suite and its updates, and its security archive where the mirror is Debian's layout. */
export function aptSources(source: DebianSource): string {
  const security = source.mirror.endsWith('/debian') ? `${source.mirror}-security` : undefined;
  const lists = [
    `deb ${source.mirror} ${source.suite} main`,
    `deb ${source.mirror} ${source.suite}-updates main`,
    ...(security ? [`deb ${security} ${source.suite}-security main`] : []),
  ];
  return `${lists.join('\n')}\n`;
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
