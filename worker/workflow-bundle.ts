import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The workflow bundle, made by a short-lived process (worker/bundle.ts) so that webpack never loads into the
 * worker itself. Made at every start, as the worker made it before, so it is always the code of this checkout.
 */
export async function bundleInChildProcess(): Promise<{ code: string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-workflow-bundle-'));
  try {
    const out = path.join(dir, 'workflows.js');
    await run(process.execPath, ['--import', 'tsx', path.join(__dirname, 'bundle.ts'), out], {
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: await fs.readFile(out, 'utf8') };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
