// Base image benchmark. The first build of each base (debootstrap + import, node, python, static) under a
// throwaway repository prefix, so the images `npm start` and the tests use are never touched, then the cached
// `ensureBaseImages` that every later `npm start` runs (median of several), next to a bare `docker image inspect`
// of the four tags as the floor. Removes the images it built. Never asserts.
// Run: node --import tsx bench/base-images.ts   (root; about 10 minutes on 2 cores)
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { promisify } from 'node:util';

import { type AllBases, baseImageTags, debianSource, ensureBaseImages } from '@scripts/stack/base-images';
import { createDockerClient } from '@shared/engine/docker-client';

import { median } from './harness';

const run = promisify(execFile);
const CACHED_RUNS = 5;

async function main() {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  const prefix = `slipway-bench-${randomBytes(3).toString('hex')}`;
  const tags = baseImageTags(debianSource(), prefix);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  try {
    const t0 = performance.now();
    const first = await ensureBaseImages({
      docker,
      prefix,
      progress: (line) => /^(debootstrap --|importing|building)/.test(line) && console.log(`  ${line}`),
    });
    const total = performance.now() - t0;

    const cached: number[] = [];
    for (let i = 0; i < CACHED_RUNS; i++) {
      const c0 = performance.now();
      const again = await ensureBaseImages({ docker, prefix });
      cached.push(performance.now() - c0);
      if (Object.keys(again.built).length > 0) throw new Error('a cached run rebuilt an image');
    }
    const bare: number[] = [];
    for (let i = 0; i < CACHED_RUNS; i++) {
      const b0 = performance.now();
      await run('docker', ['image', 'inspect', ...Object.values(tags)]);
      bare.push(performance.now() - b0);
    }

    const sizes: Partial<Record<AllBases, number>> = {};
    for (const [name, tag] of Object.entries(tags) as [AllBases, string][])
      sizes[name] = (await docker.getImage(tag).inspect()).Size;
    console.log(
      `\nSlipway base images (${new Date().toISOString()}, ${os.cpus().length} cores, suite ${debianSource().suite})`,
    );
    console.log('image            first build   size');
    for (const name of ['debian', 'node', 'python', 'static'] as const) {
      const note = name === 'debian' ? ' (debootstrap + docker import)' : '';
      console.log(
        `${name.padEnd(15)}  ${s(first.built[name] ?? 0).padEnd(12)}  ${((sizes[name] ?? 0) / 1e6).toFixed(0)} MB${note}`,
      );
    }
    console.log(`all four         ${s(total)}`);
    console.log(
      `cached ensure    median ${median(cached).toFixed(0)} ms (${cached.map((v) => v.toFixed(0)).join(', ')} ms)   bare \`docker image inspect\` of the four: median ${median(bare).toFixed(0)} ms`,
    );
  } finally {
    for (const tag of [...Object.values(tags)].reverse()) {
      await docker
        .getImage(tag)
        .remove()
        .catch(() => undefined);
      await docker
        .getImage(`${tag.split(':')[0]}:latest`)
        .remove()
        .catch(() => undefined);
    }
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
