// Deploy benchmarks. Prints figures next to a baseline measured in the same run;
// never asserts. Run: node --import tsx bench/deploy.ts
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import autocannon from 'autocannon';

import { createDockerClient } from '@shared/engine/docker-client';
import { buildFixtureImage } from '@test/helpers/images';

import { answers, bareRun, median, startService, until } from './harness';

const run = promisify(execFile);
const N = 5;

async function main() {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  const image = await buildFixtureImage(docker, 'hello');
  const svc = await startService();
  const auth = { authorization: `Bearer ${svc.org.token}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${svc.base}${path}`, {
      method,
      headers: auth,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return {
      status: r.status,
      body: (await r.text().then((t) => (t ? JSON.parse(t) : {}))) as Record<string, unknown>,
    };
  };
  try {
    // 1. Deploy to running (and answering) vs a bare docker run + first answer, same image, same machine.
    const slipway: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < N; i++) {
      const t0 = performance.now();
      const { body } = await call('POST', '/compat/deploy', { image, name: `bench-${i}` });
      const id = body.deploymentId as string;
      const url = await until(async () => {
        const d = (await call('GET', `/compat/deployments/${id}`)).body;
        return d.status === 'running' ? (d.url as string) : undefined;
      });
      await until(async () => answers(url));
      slipway.push(performance.now() - t0);
      await call('DELETE', `/compat/deployments/${id}`);

      const b0 = performance.now();
      const cid = await bareRun(image);
      bare.push(performance.now() - b0);
      await run('docker', ['rm', '-f', cid]);
    }

    // 2. Status reads against one running deployment, before the load below starts containers.
    const { body: one } = await call('POST', '/compat/deploy', { image, name: 'reads' });
    await until(async () =>
      (await call('GET', `/compat/deployments/${String(one.deploymentId)}`)).body.status === 'running'
        ? true
        : undefined,
    );
    const reads = await autocannon({
      url: `${svc.base}/compat/deployments/${String(one.deploymentId)}`,
      connections: 20,
      duration: 10,
      headers: auth,
    });

    // 3. 202 acceptance under 20 concurrent clients (each accepted deploy starts a real container).
    let seq = 0;
    const accept = await autocannon({
      url: `${svc.base}/compat/deploy`,
      method: 'POST',
      connections: 20,
      amount: 100,
      headers: auth,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ image, name: `load-${seq++}` }) }) }],
    });

    const rss = async (pid: number) =>
      Number((await run('ps', ['-o', 'rss=', '-p', String(pid)])).stdout.trim()) / 1024;
    const [apiRss, workerRss] = [await rss(svc.pids.api), await rss(svc.pids.worker)];

    const fmt = (v: number) => `${v.toFixed(0)} ms`;
    console.log(`\nSlipway deploy benchmark (${new Date().toISOString()}, ${process.arch}, node ${process.version})`);
    console.log(
      `deploy-to-running + first answer (n=${N})  median ${fmt(median(slipway))}  (min ${fmt(Math.min(...slipway))}, max ${fmt(Math.max(...slipway))})`,
    );
    console.log(
      `bare docker run + first answer     (n=${N})  median ${fmt(median(bare))}  (min ${fmt(Math.min(...bare))}, max ${fmt(Math.max(...bare))})`,
    );
    console.log(`ratio slipway / bare                          ${(median(slipway) / median(bare)).toFixed(2)}x`);
    console.log(
      `POST /compat/deploy 202 @20 clients           p50 ${accept.latency.p50} ms  p99 ${accept.latency.p99} ms  (${accept.requests.sent} requests, non-2xx ${accept.non2xx})`,
    );
    console.log(
      `GET status @20 connections, 10 s             ${reads.requests.average.toFixed(0)} req/s  p99 ${reads.latency.p99} ms  (non-2xx ${reads.non2xx})`,
    );
    console.log(
      `resident memory after load                   api ${apiRss.toFixed(0)} MB, worker ${workerRss.toFixed(0)} MB`,
    );

    // Clean up every deployment this run made.
    for (;;) {
      const page = (await call('GET', '/compat/deployments?limit=100')).body.deployments as { id: string }[];
      if (!page.length) break;
      await Promise.all(page.map((d) => call('DELETE', `/compat/deployments/${d.id}`)));
    }
    await until(async () => {
      const left = await docker.listContainers({
        all: true,
        filters: { label: [`dev.slipway.org-id=${svc.org.orgId}`] },
      });
      return left.length === 0 ? true : undefined;
    }, 120_000);
  } finally {
    await svc.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
