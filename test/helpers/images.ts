import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type Docker from 'dockerode';

const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'images');

/**
 * Builds a fixture image (test/fixtures/images/<name>) with Debian's static busybox as its only binary,
 * once per engine: nothing can be pulled here, so every test image is made locally.
 */
export async function buildFixtureImage(docker: Docker, name: string): Promise<string> {
  const tag = `slipway-test/${name}:latest`;
  const exists = await docker
    .getImage(tag)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  if (exists) return tag;
  const context = await fs.mkdtemp(path.join(os.tmpdir(), `slipway-image-${name}-`));
  try {
    await fs.cp(path.join(FIXTURES, name), context, { recursive: true });
    await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
    const stream = await docker.buildImage({ context, src: await fs.readdir(context) }, { t: tag });
    await new Promise<void>((resolve, reject) =>
      docker.modem.followProgress(stream, (err, output: { error?: string }[]) => {
        const failed = err ?? output.find((o) => o.error)?.error;
        if (failed) reject(failed instanceof Error ? failed : new Error(String(failed)));
        else resolve();
      }),
    );
    return tag;
  } finally {
    await fs.rm(context, { recursive: true, force: true });
  }
}
