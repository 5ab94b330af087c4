import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';

import { StackError } from './stack-error';

const execFileAsync = promisify(execFile);

async function installed(pkg: string): Promise<boolean> {
  return execFileAsync('dpkg-query', ['-W', '-f=${Status}', pkg]).then(
    ({ stdout }) => stdout.includes('install ok installed'),
    () => false,
  );
}

function apt(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('apt-get', args, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve()
        : reject(new StackError(`apt-get ${args.join(' ')} failed: ${stderr.trim().split('\n').pop()}`)),
    );
  });
}

let updated: Promise<void> | undefined;

/** Installs Debian packages the stack needs (root only); a no-op when they are already there. */
export async function ensureDebianPackages(pkgs: string[], why: string): Promise<string[]> {
  const missing: string[] = [];
  for (const pkg of pkgs) if (!(await installed(pkg))) missing.push(pkg);
  if (missing.length === 0) return [];
  if (process.getuid?.() !== 0) {
    throw new StackError(`${why} needs the Debian package(s) ${missing.join(', ')}; install them as root`);
  }
  updated ??= apt(['update', '-qq']);
  await updated;
  await apt(['install', '-y', '-qq', '--no-install-recommends', ...missing]);
  return missing;
}
