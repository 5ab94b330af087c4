// Deployment lifecycle. Redeploy, stop → start and rollback times, and the requests
// that failed during a redeploy under 50 req/s through the edge router, next to a bare `docker run`, `docker stop`
// and `docker start` of the same image measured in the same run. Never asserts. Run: node --import tsx bench/lifecycle.ts
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { createDockerClient } from '@shared/engine/docker-client';
import { edgeAgent, edgeGet } from '@test/helpers/edge';
import { buildFixtureImage } from '@test/helpers/images';

import { answers, bareRun, median, startService, until } from './harness';

const run = promisify(execFile);
const N = Number(process.env.BENCH_N ?? 5);
const RATE = 50;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function main() {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  const image = await buildFixtureImage(docker, 'hello');
  const svc = await startService();
  const headers = { authorization: `Bearer ${svc.org.token}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const r = await fetch(`${svc.base}${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
    const text = await r.text();
    return { ...(text ? (JSON.parse(text) as Json) : {}), http: r.status };
  };
  /** Sends a platform command and follows it to its end: the time the caller waits for it. */
  const command = async (id: string, name: string, body: unknown = {}) => {
    const t0 = performance.now();
    const accepted = await call('POST', `/platform/deployments/${id}/${name}`, body);
    if (accepted.http !== 202) throw new Error(`${name}: ${JSON.stringify(accepted)}`);
    const url = `/platform${String(accepted.data.command.url).replace(/^\/platform/, '')}`;
    const done = await until(
      async () => {
        const c = await call('GET', url);
        return c.data?.state === 'running' ? undefined : c.data;
      },
      300_000,
      50,
    );
    if (done.state !== 'succeeded') throw new Error(`${name} failed: ${JSON.stringify(done)}`);
    return performance.now() - t0;
  };
  const agent = edgeAgent();
  let id: string | undefined;

  try {
    const deployed = await call('POST', '/compat/deploy', { image, name: 'lifecycle', port: 8080 });
    id = String(deployed.deploymentId);
    const d = await call('GET', `/compat/deployments/${id}?wait=running&timeout=120`);
    const url = String(d.url);

    // Traffic at RATE req/s through the router for the whole run; failures counted per phase.
    let phase = 'idle';
    const tally: Record<string, { sent: number; ok: number; failed: number; resent: number }> = {};
    let stopLoad = false;
    const load = (async () => {
      for (let next = performance.now(); !stopLoad; next += 1000 / RATE) {
        const t = (tally[phase] ??= { sent: 0, ok: 0, failed: 0, resent: 0 });
        t.sent++;
        void edgeGet(url, { agent, onRetry: () => t.resent++ }).then(
          (a) => (a.status < 300 ? t.ok++ : t.failed++),
          () => t.failed++,
        );
        await new Promise((r) => setTimeout(r, Math.max(0, next + 1000 / RATE - performance.now())));
      }
    })();

    const redeploy: number[] = [];
    phase = 'redeploy';
    for (let i = 0; i < N; i++) redeploy.push(await command(id, 'redeploy', { envVars: { ROUND: String(i) } }));
    phase = 'rollback';
    const rollback: number[] = [];
    for (let i = 0; i < N; i++) rollback.push(await command(id, 'rollback', {}));
    phase = 'stop-start';
    const stop: number[] = [];
    const start: number[] = [];
    for (let i = 0; i < N; i++) {
      stop.push(await command(id, 'stop'));
      const t0 = performance.now();
      await command(id, 'start');
      await until(async () => ((await edgeGet(url, { agent })).status === 200 ? true : undefined), 60_000, 20);
      start.push(performance.now() - t0);
    }
    stopLoad = true;
    await load;
    await new Promise((r) => setTimeout(r, 500));
    await call('DELETE', `/compat/deployments/${id}`);
    id = undefined;

    // Baselines: the same image by hand on the same engine.
    const bareRunT: number[] = [];
    const bareStop: number[] = [];
    const bareStart: number[] = [];
    for (let i = 0; i < N; i++) {
      let t0 = performance.now();
      const cid = await bareRun(image);
      bareRunT.push(performance.now() - t0);
      t0 = performance.now();
      await run('docker', ['stop', cid]);
      bareStop.push(performance.now() - t0);
      t0 = performance.now();
      await run('docker', ['start', cid]);
      const port = (await run('docker', ['port', cid, '8080/tcp'])).stdout.trim().split('\n')[0]!.split(':').pop();
      await until(async () => answers(`http://127.0.0.1:${port}/`), 60_000, 20);
      bareStart.push(performance.now() - t0);
      await run('docker', ['rm', '-f', cid]);
    }

    const ms = (xs: number[]) => `${(median(xs) / 1000).toFixed(2)} s`;
    console.log(`deployment lifecycle, median of ${N} (same run, same image, same engine)`);
    console.log(
      `  redeploy (new release beside the old, switch, old removed): ${ms(redeploy)}   bare docker run + answer: ${ms(bareRunT)}`,
    );
    console.log(
      `  rollback (to the last healthy release, no rebuild):          ${ms(rollback)}   bare docker run + answer: ${ms(bareRunT)}`,
    );
    console.log(
      `  stop:                                                        ${ms(stop)}   bare docker stop: ${ms(bareStop)}`,
    );
    console.log(
      `  start until the URL answers:                                 ${ms(start)}   bare docker start + answer: ${ms(bareStart)}`,
    );
    for (const [p, t] of Object.entries(tally))
      console.log(
        `  traffic ${RATE} req/s during ${p}: ${t.sent} sent, ${t.ok} 2xx, ${t.failed} failed, ${t.resent} resent once on a new connection after the router closed a kept one`,
      );
  } finally {
    // A failed run leaves nothing on the engine either.
    if (id) await call('DELETE', `/compat/deployments/${id}`).catch(() => undefined);
    await agent.close();
    await svc.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
