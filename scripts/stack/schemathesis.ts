import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { ifAbsent } from '@shared/ignore';

import { cacheDir } from './paths';
import { StackError } from './stack-error';

const execFileAsync = promisify(execFile);

/**
 * Schemathesis checks the OpenAPI document against the running api (undocumented statuses, response schema
 * violations, server errors). It is a Python tool from PyPI: installed once, pinned, into a venv in the tool cache.
 */
export const SCHEMATHESIS_VERSION = '4.32.5';

const exists = (file: string) => fs.access(file).then(() => true, ifAbsent(false));

/**
 * The venv's python, installing schemathesis first when absent; run it as `python -m schemathesis.cli`.
 * The venv is built beside its final directory and renamed into place, so a concurrent run never sees half of
 * one; its entry scripts would name the old path in their shebang, the interpreter itself does not care.
 */
export async function ensureSchemathesis(): Promise<string> {
  const dir = path.join(cacheDir(), 'tools', `schemathesis-${SCHEMATHESIS_VERSION}`);
  const python = path.join(dir, 'bin', 'python');
  const marker = path.join(dir, 'installed');
  if (await exists(marker)) return python;

  const work = `${dir}.${process.pid}.tmp`;
  await fs.rm(work, { recursive: true, force: true });
  await fs.mkdir(path.dirname(dir), { recursive: true });
  try {
    await execFileAsync('python3', ['-m', 'venv', work]).catch((err: Error & { stderr?: string }) => {
      throw new StackError(
        `cannot create a Python venv for schemathesis (python3 -m venv): ${err.stderr ?? err.message}`,
      );
    });
    await execFileAsync(
      path.join(work, 'bin', 'python'),
      ['-m', 'pip', 'install', '--quiet', '--no-input', `schemathesis==${SCHEMATHESIS_VERSION}`],
      { maxBuffer: 16 * 1024 * 1024, timeout: 10 * 60_000 },
    ).catch((err: Error & { stderr?: string }) => {
      const why = (err.stderr || err.message).trim().split('\n').slice(-3).join(' | ');
      throw new StackError(`cannot install schemathesis ${SCHEMATHESIS_VERSION} from PyPI: ${why}`);
    });
    await fs.writeFile(path.join(work, 'installed'), `${SCHEMATHESIS_VERSION}\n`);
    await fs.rename(work, dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
    });
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
  return python;
}
