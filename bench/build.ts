// Source build benchmarks. For each sample app, Slipway's
// build + deploy until the app answers, next to a bare `docker build` + `docker run` + first answer of the same
// source and the same generated Dockerfile (same base images, same CA bundle in the build stage), measured in the
// same run. Every run gets a fresh nonce file, so neither side reuses the other's cached source layers (as with a
// new commit): each `npm ci` / `pip install` really fetches from the registry. Never asserts.
// Run: node --import tsx bench/build.ts   (BENCH_N runs per case, default 2)
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

import { planBuild } from '@shared/build/detect';
import { createDockerClient } from '@shared/engine/docker-client';
import { BASE_IMAGES, buildBaseImages } from '@test/helpers/base-images';
import { type GitServer, startGitServer } from '@test/helpers/git-server';
import { zipDirectory } from '@test/helpers/zip';

import { answers, bareRun, median, startService, until } from './harness';

const run = promisify(execFile);
const N = Number(process.env.BENCH_N) || 2;
const FIXTURES = path.resolve(__dirname, '..', 'test', 'fixtures', 'sources');

/** A copy of a fixture with a nonce file, so its build cannot reuse an earlier run's source layers. */
async function freshCopy(name: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `bench-src-${name}-`));
  await fs.cp(path.join(FIXTURES, name), dir, { recursive: true });
  await fs.writeFile(path.join(dir, '.bench-nonce'), randomBytes(8).toString('hex'));
  return dir;
}

async function main() {
  // The stack first: it starts dockerd when none runs, and the base images are built on that engine.
  const svc = await startService({
    ALLOW_PRIVATE_GIT_HOSTS: 'true',
    BUILD_BASE_IMAGE_NODE: BASE_IMAGES.node,
    BUILD_BASE_IMAGE_STATIC: BASE_IMAGES.static,
    BUILD_BASE_IMAGE_PYTHON: BASE_IMAGES.python,
    SECRETS_KEY: randomBytes(32).toString('base64'),
    RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000000',
  });
  let git: GitServer | undefined;
  const auth = { authorization: `Bearer ${svc.org.token}` };
  const json = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`${svc.base}${p}`, {
      method,
      headers: { ...auth, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await r.text().then((t) => (t ? JSON.parse(t) : {}))) as Record<string, unknown>;
  };

  const cases: { label: string; fixture: string; via: 'zip' | 'git' }[] = [
    { label: 'Node + express, zip', fixture: 'express-app', via: 'zip' },
    { label: 'Node + express, git', fixture: 'express-app', via: 'git' },
    { label: 'Flask + gunicorn, zip', fixture: 'flask-app', via: 'zip' },
    { label: 'Flask + gunicorn, git', fixture: 'flask-app', via: 'git' },
    { label: 'npm-built site, zip', fixture: 'built-site', via: 'zip' },
    { label: 'npm-built site, git', fixture: 'built-site', via: 'git' },
  ];
  const results: { label: string; slipway: number[]; bare: number[] }[] = [];
  try {
    const base = await buildBaseImages(createDockerClient(process.env.DOCKER_HOST));
    git = await startGitServer();
    for (const c of cases) {
      const slipway: number[] = [];
      const bare: number[] = [];
      for (let i = 0; i < N; i++) {
        // Slipway: upload (zip) or nothing (git), deploy, wait for running, first answer.
        const src = await freshCopy(c.fixture);
        const t0 = performance.now();
        let body: Record<string, unknown>;
        if (c.via === 'zip') {
          const form = new FormData();
          form.append('archive', new Blob([new Uint8Array(await zipDirectory(src))]), 'src.zip');
          const up = (await (
            await fetch(`${svc.base}/compat/uploads/zip`, { method: 'POST', headers: auth, body: form })
          ).json()) as { uploadId: string };
          body = { uploadId: up.uploadId };
        } else {
          body = { repoUrl: await git.addRepo(`bench/${c.fixture}-${randomUUID()}`, src) };
        }
        const t1 = c.via === 'git' ? performance.now() : t0; // repo creation is the fixture's, not Slipway's
        const accepted = await json('POST', '/compat/deploy/source', { ...body, name: `bench-${i}`, port: 8080 });
        const id = accepted.deploymentId as string;
        const url = await until(async () => {
          const d = await json('GET', `/compat/deployments/${id}`);
          if (d.status === 'failed') throw new Error(`deploy failed: ${JSON.stringify(d.error)}`);
          return d.status === 'running' ? (d.url as string) : undefined;
        }, 300_000);
        await until(async () => answers(url));
        slipway.push(performance.now() - t1);
        await json('DELETE', `/compat/deployments/${id}`);

        // Bare: the same source (a fresh nonce) and the Dockerfile Slipway builds, by hand.
        const bareSrc = await freshCopy(c.fixture);
        const plan = await planBuild(bareSrc, { port: 8080, baseImages: base });
        const tag = `bench-bare/${c.fixture}:${i}`;
        const b0 = performance.now();
        await run('docker', ['build', '-q', '-t', tag, '-f', path.join(bareSrc, plan.dockerfile), bareSrc], {
          maxBuffer: 64 * 1024 * 1024,
        });
        const cid = await bareRun(tag);
        bare.push(performance.now() - b0);
        await run('docker', ['rm', '-f', cid]);
        await run('docker', ['rmi', '-f', tag]);
        await fs.rm(src, { recursive: true, force: true });
        await fs.rm(bareSrc, { recursive: true, force: true });
      }
      results.push({ label: c.label, slipway, bare });
    }

    const s = (v: number) => `${(v / 1000).toFixed(2)} s`;
    console.log(`\nSlipway source build benchmark (${new Date().toISOString()}, ${os.cpus().length} cores, n=${N})`);
    console.log('sample app              slipway build+deploy+answer   bare docker build+run+answer   ratio');
    for (const r of results) {
      console.log(
        `${r.label.padEnd(22)}  median ${s(median(r.slipway)).padEnd(9)} (${r.slipway.map(s).join(', ')})   median ${s(median(r.bare)).padEnd(9)} (${r.bare.map(s).join(', ')})   ${(median(r.slipway) / median(r.bare)).toFixed(2)}x`,
      );
    }
  } finally {
    await git?.stop();
    await svc.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
