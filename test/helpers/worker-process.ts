import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

import type { Harness } from './harness';

const root = path.resolve(__dirname, '..', '..');

/**
 * The real worker entry point, as `npm start` runs it, on the harness's task queue and database. Its output is kept
 * (`output()`), so a test can look for what the process said about an error.
 */
export function spawnWorker(h: Harness) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'worker', 'main.ts')], {
    cwd: root,
    // The harness's own settings (task queue, database, Redis key prefix, …), as its in-process worker has them.
    env: {
      ...process.env,
      ...h.env,
      LOG_LEVEL: 'warn',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return { child, output: () => output };
}

/** Resolves once the process has exited (at once when it already has). */
export const exited = (p: ChildProcess) =>
  new Promise((resolve) => (p.exitCode !== null || p.signalCode !== null ? resolve(null) : p.once('exit', resolve)));
