import { spawn } from 'node:child_process';
import path from 'node:path';

import type { Harness } from './harness';

const root = path.resolve(__dirname, '..', '..');

/**
 * The real api entry point (`npm start`'s) on `port`, with the harness's settings (task queue, database, Redis key
 * prefix, …) and `env` over them. Its output is kept (`output()`): with LOG_LEVEL=info, the access log's lines.
 */
export function spawnApi(h: Pick<Harness, 'env'>, port: number, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'api', 'server.ts')], {
    cwd: root,
    env: {
      ...process.env,
      ...h.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  return { child, base: `http://127.0.0.1:${port}`, output: () => output };
}
