import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { ensureMoto } from '@scripts/stack/moto';
import { freePort, startProcess, waitUntil } from '@scripts/stack/process';

/**
 * moto in server mode on a free loopback port: the AWS APIs with their real wire format, for the ECS adapter's tests
 * (the real AWS SDK talks to it through AWS_ENDPOINT_URL). Installed into the tool cache on first use. `env` is passed
 * to moto (MOTO_ECS_SERVICE_RUNNING makes new services report that many running tasks).
 */
export async function startMoto(env: Record<string, string> = {}) {
  const server = await ensureMoto((line) => console.log(`[moto] ${line}`));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-moto-'));
  const port = await freePort();
  const proc = startProcess('moto', server, ['-H', '127.0.0.1', '-p', String(port)], {
    logFile: path.join(dir, 'moto.log'),
    env: { ...process.env, ...env },
  });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntil('moto_server', async () => (await fetch(`${endpoint}/moto-api/`)).ok, {
      timeoutMs: 60_000,
      proc,
    });
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    endpoint,
    async stop() {
      await proc.stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}
