import { createHash } from 'node:crypto';
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
  // Tagged by content: an engine that built an older version of the fixture builds this one anew.
  const tag = `slipway-test/${name}:${await contentHash(path.join(FIXTURES, name))}`;
  await buildImageOnce(docker, tag, async (context) => {
    await fs.cp(path.join(FIXTURES, name), context, { recursive: true });
    await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
  });
  return tag;
}

/**
 * Builds `tag` from a temporary context that `fill` writes, unless the engine already has it: delete the tag to
 * rebuild. A failed build rejects with the engine's message.
 */
export async function buildImageOnce(docker: Docker, tag: string, fill: (context: string) => Promise<void>) {
  const exists = await docker
    .getImage(tag)
    .inspect()
    .then(
      () => true,
      () => false,
    );
  if (exists) return;
  const context = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-image-'));
  try {
    await fill(context);
    const stream = await docker.buildImage({ context, src: await fs.readdir(context) }, { t: tag, rm: true });
    await new Promise<void>((resolve, reject) =>
      docker.modem.followProgress(stream, (err, output: { error?: string }[]) => {
        const failed = err ?? output.find((o) => o.error)?.error;
        if (failed) reject(new Error(`building ${tag}: ${failed instanceof Error ? failed.message : failed}`));
        else resolve();
      }),
    );
  } finally {
    await fs.rm(context, { recursive: true, force: true });
  }
}

/** A short hash of every file below `dir` (paths, modes and contents), in a stable order. */
async function contentHash(dir: string): Promise<string> {
  const hash = createHash('sha256');
  const entries = await fs.readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();
  for (const file of files) {
    const full = path.join(dir, file);
    hash.update(`${file}\0${(await fs.stat(full)).mode & 0o777}\0`);
    hash.update(await fs.readFile(full));
  }
  return hash.digest('hex').slice(0, 12);
}
