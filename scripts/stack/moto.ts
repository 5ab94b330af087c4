import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { ifAbsent } from '@shared/ignore';

import { ensureDebianPackages } from './debian';
import { withMachineLock } from './machine-lock';
import { cacheDir } from './paths';
import { StackError } from './stack-error';

const execFileAsync = promisify(execFile);

/**
 * moto's server mode answers the AWS APIs (ECS, ELBv2, CloudWatch Logs, EC2, STS, ECR) on one local port with their
 * real wire format, so the ECS adapter's tests drive the real AWS SDK (activities/providers/cloud-ecs.ts). A Python
 * tool from PyPI: installed once, pinned, into a venv in the tool cache.
 */
export const MOTO_VERSION = '5.2.5';

const exists = (file: string) => fs.access(file).then(() => true, ifAbsent(false));

const motoDir = () => path.join(cacheDir(), 'tools', `moto-${MOTO_VERSION}`);

/** Where `python3 -m venv` comes from when the one on PATH cannot make a venv: Debian's own Python. */
async function makeVenv(dir: string, progress: (line: string) => void): Promise<void> {
  const first = await execFileAsync('python3', ['-m', 'venv', dir]).then(
    () => undefined,
    (err: Error & { stderr?: string }) => err.stderr || err.message,
  );
  if (first === undefined) return;
  // A fresh Debian has python3 without ensurepip (python3-venv), or no python3 at all.
  await ensureDebianPackages(['python3', 'python3-venv'], 'moto, the AWS double of the ECS tests', progress);
  await fs.rm(dir, { recursive: true, force: true });
  await execFileAsync('/usr/bin/python3', ['-m', 'venv', dir]).catch((err: Error & { stderr?: string }) => {
    throw new StackError(
      `cannot create a Python venv for moto (python3 -m venv): ${(err.stderr || err.message).trim()} ` +
        `(first try: ${first.trim()}); install python3-venv`,
    );
  });
}

/**
 * The path of `moto_server`, installing moto[server] first when absent. One install per machine at a time (jest
 * workers may ask at once): the second waits for the first's lock, then finds it done. The venv is built beside its
 * final directory and renamed into place, so an interrupted install leaves nothing half made.
 */
export async function ensureMoto(progress: (line: string) => void = () => undefined): Promise<string> {
  const dir = motoDir();
  const server = path.join(dir, 'bin', 'moto_server');
  const marker = path.join(dir, 'installed');
  if (await exists(marker)) return server;
  await withMachineLock(`moto-${MOTO_VERSION}-install`, progress, undefined, async () => {
    if (await exists(marker)) return;
    // Its entry scripts name the venv's path in their shebang, so the venv is made at its final path under a lock
    // rather than renamed; the marker written last says it is whole.
    await fs.rm(dir, { recursive: true, force: true });
    await fs.mkdir(path.dirname(dir), { recursive: true });
    progress(`installing moto[server] ${MOTO_VERSION} from PyPI (first run only)`);
    await makeVenv(dir, progress);
    await execFileAsync(
      path.join(dir, 'bin', 'python'),
      ['-m', 'pip', 'install', '--quiet', '--no-input', `moto[server]==${MOTO_VERSION}`],
      { maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 },
    ).catch((err: Error & { stderr?: string }) => {
      const why = (err.stderr || err.message).trim().split('\n').slice(-3).join(' | ');
      throw new StackError(`cannot install moto[server] ${MOTO_VERSION} from PyPI: ${why}`);
    });
    await fs.writeFile(marker, `${MOTO_VERSION}\n`);
  });
  return server;
}
