// Deploy benchmarks. Prints figures next to a baseline measured in the same run; never asserts.
// Run: node --import tsx bench/deploy.ts (alone), or through bench/all.ts (`npm run bench`), which takes the figures.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import autocannon from 'autocannon';

import { createDockerClient } from '@shared/engine/docker-client';
import { buildFixtureImage } from '@test/helpers/images';

import { answers, apiRssMb, bareRun, median, rssMb, startService, until } from './harness';

const run = promisify(execFile);
const N = Number(process.env.BENCH_N ?? 5);
/** Seconds of each read phase (status reads with one and two api processes, the constant, /healthz). */
const READ_S = Number(process.env.BENCH_READ_S ?? 10);
/** How many deploys the 202 phase sends, 20 at a time; each starts a real container. */
const ACCEPTS = Number(process.env.BENCH_ACCEPTS ?? 100);

export interface Throughput {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

export interface Memory {
  /** One entry per api process (a cluster's primary apart); MB. */
  api: number[];
  /** A cluster's primary, which only forks and watches; MB. */
  apiPrimary?: number;
  worker: number;
}

export interface DeployFigures {
  deploy: { n: number; slipwayMs: number[]; bareMs: number[] };
  accept: { p50: number; p99: number; sent: number; non2xx: number };
  /** GET /compat/deployments/{id} at 20 connections, by number of api processes. */
  statusReads: { processes: number; reads: Throughput }[];
  /** An authenticated read of a constant (GET /compat/providers) and its baseline, /healthz, on one api process. */
  constantRead: Throughput;
  healthz: Throughput;
  memory: { atRest: Memory; afterBench: Memory };
}

async function load(url: string, headers: Record<string, string> = {}): Promise<Throughput> {
  const r = await autocannon({ url, connections: 20, duration: READ_S, headers });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

async function memory(pids: { api: number; worker: number }, cluster?: number): Promise<Memory> {
  const api = await apiRssMb(pids.api);
  const clustered = await (cluster ? apiRssMb(cluster) : Promise.resolve([]));
  return {
    api: [...api, ...clustered].filter((p) => p.role === 'api').map((p) => p.mb),
    apiPrimary: clustered.find((p) => p.role === 'primary')?.mb,
    worker: (await rssMb(pids.worker)) ?? 0,
  };
}

/** Starts its own stack, a worker, one api of one process and one of two, measures, cleans up and stops them. */
export async function deployBench(): Promise<DeployFigures> {
  // The stack first: it starts the engine when none answers, and the image is built on that engine.
  const svc = await startService({}, { apiProcesses: [1, 2] });
  const docker = createDockerClient(svc.env.DOCKER_HOST);
  let image: string;
  try {
    image = await buildFixtureImage(docker, 'hello');
  } catch (err) {
    await svc.stop();
    throw err;
  }
  const [single, pair] = svc.apis as [(typeof svc.apis)[0], (typeof svc.apis)[0]];
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
    const atRest = await memory(svc.pids, pair.pid);

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

    // 2. Status reads against one running deployment, before the load below starts containers: through the api of
    // one process, then through the one of two, both on the same data; then the constant and /healthz.
    const { body: one } = await call('POST', '/compat/deploy', { image, name: 'reads' });
    const statusPath = `/compat/deployments/${String(one.deploymentId)}`;
    await until(async () => ((await call('GET', statusPath)).body.status === 'running' ? true : undefined));
    const statusReads = [];
    for (const a of [single, pair])
      statusReads.push({ processes: a.processes, reads: await load(`${a.base}${statusPath}`, auth) });
    const constantRead = await load(`${single.base}/compat/providers`, auth);
    const healthz = await load(`${single.base}/healthz`);

    // 3. 202 acceptance under 20 concurrent clients (each accepted deploy starts a real container).
    let seq = 0;
    const accept = await autocannon({
      url: `${svc.base}/compat/deploy`,
      method: 'POST',
      connections: 20,
      amount: ACCEPTS,
      headers: auth,
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ image, name: `load-${seq++}` }) }) }],
    });
    const afterBench = await memory(svc.pids, pair.pid);

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
    return {
      deploy: { n: N, slipwayMs: slipway, bareMs: bare },
      accept: { p50: accept.latency.p50, p99: accept.latency.p99, sent: accept.requests.sent, non2xx: accept.non2xx },
      statusReads,
      constantRead,
      healthz,
      memory: { atRest, afterBench },
    };
  } finally {
    await svc.stop();
  }
}

const ms = (v: number) => `${v.toFixed(0)} ms`;
const mb = (v: number) => `${v.toFixed(0)} MB`;
export const showThroughput = (t: Throughput) =>
  `${t.rps.toFixed(0)} req/s  p50 ${t.p50} ms  p99 ${t.p99} ms${t.non2xx || t.errors ? `  (non-2xx ${t.non2xx}, errors ${t.errors})` : ''}`;
export const showMemory = (m: Memory) =>
  `api ${m.api.map(mb).join(' / ')}${m.apiPrimary === undefined ? '' : ` (cluster primary ${mb(m.apiPrimary)})`}, worker ${mb(m.worker)}`;

export function printDeployFigures(f: DeployFigures) {
  const { slipwayMs: s, bareMs: b, n } = f.deploy;
  console.log(`\nSlipway deploy benchmark (${new Date().toISOString()}, ${process.arch}, node ${process.version})`);
  console.log(
    `deploy-to-running + first answer (n=${n})  median ${ms(median(s))}  (min ${ms(Math.min(...s))}, max ${ms(Math.max(...s))})`,
  );
  console.log(
    `bare docker run + first answer     (n=${n})  median ${ms(median(b))}  (min ${ms(Math.min(...b))}, max ${ms(Math.max(...b))})`,
  );
  console.log(`ratio slipway / bare                          ${(median(s) / median(b)).toFixed(2)}x`);
  console.log(
    `POST /compat/deploy 202 @20 clients           p50 ${f.accept.p50} ms  p99 ${f.accept.p99} ms  (${f.accept.sent} requests, non-2xx ${f.accept.non2xx})`,
  );
  for (const { processes, reads } of f.statusReads)
    console.log(
      `GET status @20 connections, ${READ_S} s, ${processes} api process${processes > 1 ? 'es' : ''}  ${showThroughput(reads)}`,
    );
  console.log(`GET /compat/providers @20 connections        ${showThroughput(f.constantRead)}`);
  console.log(`GET /healthz @20 connections                 ${showThroughput(f.healthz)}`);
  console.log(`resident memory at rest                      ${showMemory(f.memory.atRest)}`);
  console.log(`resident memory after load                   ${showMemory(f.memory.afterBench)}`);
}

if (require.main === module) {
  deployBench()
    .then(printDeployFigures)
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
