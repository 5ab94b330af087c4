import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type Docker from 'dockerode';

import { freePort, waitUntil } from '@scripts/stack/process';

/** A local registry (Debian's docker-registry) on loopback, so the engine's pull path runs for real. */
export async function startRegistry() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-registry-'));
  const port = await freePort();
  const config = path.join(dir, 'config.yml');
  await fs.writeFile(
    config,
    `version: 0.1\nstorage:\n  filesystem:\n    rootdirectory: ${dir}/data\nhttp:\n  addr: 127.0.0.1:${port}\n`,
  );
  const child = spawn('docker-registry', ['serve', config], { stdio: 'ignore' });
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await waitUntil('docker-registry', async () => (await fetch(`http://127.0.0.1:${port}/v2/`)).ok, {
    timeoutMs: 20_000,
    proc: { exited, logFile: '/dev/null' },
  });
  return {
    host: `127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGTERM');
      await exited;
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/** Pushes a local image to the registry under `ref`, then drops the local copy so a deploy must pull it. */
export async function pushAndForget(docker: Docker, localImage: string, ref: string): Promise<void> {
  const [repo, tag] = [ref.slice(0, ref.lastIndexOf(':')), ref.slice(ref.lastIndexOf(':') + 1)];
  await docker.getImage(localImage).tag({ repo, tag });
  const stream = await docker.getImage(ref).push({ authconfig: { serveraddress: ref.split('/')[0]! } });
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (err, out: { error?: string }[]) => {
      const failed = err ?? out.find((o) => o.error)?.error;
      if (failed) reject(failed instanceof Error ? failed : new Error(String(failed)));
      else resolve();
    }),
  );
  await docker.getImage(ref).remove();
}
