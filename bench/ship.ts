// The developer's loop: from `slipway deploy` of a one-line change in a linked Node app to the new code serving at
// the app's URL, next to a bare `docker build` + `docker run` of the same change with the same generated Dockerfile
// until it answers, measured in the same run. A client polls the URL every 50 ms throughout and counts what was
// not 2xx. Never asserts.
// Run: node --import tsx bench/ship.ts   (BENCH_N changes, default 5)
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { Agent, fetch as undiciFetch } from 'undici';

import { planBuild } from '@shared/build/detect';
import { createDockerClient } from '@shared/engine/docker-client';
import { localhostLookup } from '@shared/localhost-lookup';
import { BASE_IMAGES, buildBaseImages } from '@test/helpers/base-images';

import { median, startService, until } from './harness';

const run = promisify(execFile);
const N = Number(process.env.BENCH_N) || 5;
const ROOT = path.resolve(__dirname, '..');
const APP = path.join(ROOT, 'test', 'fixtures', 'sources', 'express-app');
const SLIPWAY = path.join(ROOT, 'bin', 'slipway.cjs');
// One connection per request, as a browser opening the page anew would.
const fresh = new Agent({ pipelining: 0, connect: { lookup: localhostLookup } });

/** The app's answer at `url`, or undefined while it answers something else (or nothing). */
const answerOf = (url: string) =>
  undiciFetch(url, { dispatcher: fresh, signal: AbortSignal.timeout(2_000) }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }));

/** The one-line change: the greeting carries a version the bench waits for. */
async function writeVersion(dir: string, version: string): Promise<void> {
  const server = path.join(dir, 'server.js');
  const text = await fs.readFile(server, 'utf8');
  await fs.writeFile(server, text.replace(/hello from express[^`]*`/, `hello from express, version ${version}\\n\``));
}

async function main() {
  const svc = await startService({
    BUILD_BASE_IMAGE_NODE: BASE_IMAGES.node,
    BUILD_BASE_IMAGE_STATIC: BASE_IMAGES.static,
    BUILD_BASE_IMAGE_PYTHON: BASE_IMAGES.python,
  });
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-ship-'));
  const cli = (...args: string[]) =>
    run(process.execPath, [SLIPWAY, ...args], {
      cwd: dir,
      env: { ...process.env, SLIPWAY_URL: svc.base, SLIPWAY_TOKEN: svc.org.token },
      maxBuffer: 64 * 1024 * 1024,
    });
  const slipway: number[] = [];
  const bare: number[] = [];
  const notOk: Record<string, number> = {};
  let polled = 0;
  try {
    const base = await buildBaseImages(createDockerClient(process.env.DOCKER_HOST));
    await fs.cp(APP, dir, { recursive: true });
    await writeVersion(dir, 'v0');
    // The first deploy creates the app and links the folder; it is not what is measured.
    await cli('deploy', '--name', 'ship', '--port', '8080', '--wait');
    const { stdout } = await cli('status', '--json');
    const shown = JSON.parse(stdout) as { url?: string; deployment?: { url?: string } };
    const url = shown.url ?? shown.deployment?.url;
    if (!url) throw new Error(`slipway status --json showed no url: ${stdout.slice(0, 500)}`);
    await until(async () => ((await answerOf(url)).text.includes('v0') ? true : undefined), 120_000);

    let polling = true;
    const poller = (async () => {
      while (polling) {
        const r = await answerOf(url).catch((err: unknown) => ({ status: (err as Error).name, text: '' }));
        polled++;
        if (typeof r.status !== 'number' || r.status >= 300)
          notOk[String(r.status)] = (notOk[String(r.status)] ?? 0) + 1;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    for (let i = 1; i <= N; i++) {
      const version = `v${i}-${randomBytes(3).toString('hex')}`;
      await writeVersion(dir, version);
      const t0 = performance.now();
      await cli('deploy');
      await until(async () => ((await answerOf(url)).text.includes(version) ? true : undefined), 300_000);
      slipway.push(performance.now() - t0);

      // Bare: the same folder, the Dockerfile Slipway generates for it, built and run by hand.
      const plan = await planBuild(dir, { port: 8080, baseImages: base });
      const tag = `bench-bare/ship:${i}`;
      const b0 = performance.now();
      await run('docker', ['build', '-q', '-t', tag, '-f', path.join(dir, plan.dockerfile), dir], {
        maxBuffer: 64 * 1024 * 1024,
      });
      const cid = (await run('docker', ['run', '-d', '-p', '127.0.0.1::8080', tag])).stdout.trim();
      const port = (await run('docker', ['port', cid, '8080/tcp'])).stdout.trim().split('\n')[0]!.split(':').pop();
      await until(async () =>
        (await answerOf(`http://127.0.0.1:${port}/`)).text.includes(version) ? true : undefined,
      );
      bare.push(performance.now() - b0);
      await run('docker', ['rm', '-f', cid]);
      await run('docker', ['rmi', '-f', tag]);
      await fs.rm(path.join(dir, plan.dockerfile), { force: true });
    }
    polling = false;
    await poller;
    await cli('destroy', '--yes').catch((err: unknown) => console.error('destroy:', (err as Error).message));

    const s = (v: number) => `${(v / 1000).toFixed(2)} s`;
    console.log(`\nSlipway ship benchmark (${new Date().toISOString()}, ${os.cpus().length} cores, n=${N})`);
    console.log(
      `slipway deploy (linked folder) to new code at the URL: median ${s(median(slipway))} (${slipway.map(s).join(', ')})`,
    );
    console.log(
      `bare docker build + run + answer:                  median ${s(median(bare))} (${bare.map(s).join(', ')})`,
    );
    console.log(`ratio ${(median(slipway) / median(bare)).toFixed(2)}x`);
    console.log(
      `a client polling the URL every 50 ms: ${polled} requests, not 2xx: ${JSON.stringify(notOk)} (the URL never changed)`,
    );
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
    await svc.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
