// What an agent waits for. The long-poll's added latency over the status change, median of
// BENCH_N (20), next to the usual agent loop that polls every second, measured in the same run. Never asserts.
// Run: node --import tsx bench/agents.ts
import { createDockerClient } from '@shared/engine/docker-client';
import { buildFixtureImage } from '@test/helpers/images';

import { median, percentile, startService } from './harness';

const N = Number(process.env.BENCH_N ?? 20);

interface Deployment {
  status: string;
  events: { status: string; at: string }[];
}

async function main() {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  // The app sleeps 6 s before it listens: the wait starts well before the status changes.
  const image = await buildFixtureImage(docker, 'slow-hello');
  const svc = await startService();
  const headers = { authorization: `Bearer ${svc.org.token}`, 'content-type': 'application/json' };
  const get = async (path: string) => (await (await fetch(`${svc.base}${path}`, { headers })).json()) as Deployment;
  const deploy = async (i: number) => {
    const r = await fetch(`${svc.base}/compat/deploy`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ image, name: `agent-${i}`, port: 8080 }),
    });
    return ((await r.json()) as { deploymentId: string }).deploymentId;
  };
  const destroy = (id: string) => fetch(`${svc.base}/compat/deployments/${id}`, { method: 'DELETE', headers });
  /** How long after the record says `running` the caller knew it (same clock: one machine). */
  let failed = 0;
  /** Into `into` when the deployment ran; a deployment that failed is counted and printed, not measured. */
  const lag = (into: number[], d: Deployment, seenAt: number) => {
    const running = d.events.find((e) => e.status === 'running');
    if (running) into.push(seenAt - Date.parse(running.at));
    else {
      failed++;
      console.error(`a deployment did not run: ${JSON.stringify(d.events)}`);
    }
  };

  try {
    const longPoll: number[] = [];
    const polling: number[] = [];
    for (let i = 0; i < N; i++) {
      const a = await deploy(i);
      const d = await get(`/compat/deployments/${a}?wait=running&timeout=60`);
      lag(longPoll, d, Date.now());
      await destroy(a);

      // Baseline: a loop that reads the status every second, as agents write by hand.
      const b = await deploy(i);
      let seen: Deployment;
      for (;;) {
        seen = await get(`/compat/deployments/${b}`);
        if (seen.status === 'running' || seen.status === 'failed') break;
        await new Promise((r) => setTimeout(r, 1000));
      }
      lag(polling, seen, Date.now());
      await destroy(b);
    }
    const fmt = (xs: number[]) =>
      `median ${median(xs).toFixed(0)} ms, p90 ${percentile(xs, 90).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms`;
    console.log(`status change → caller knows it, n=${N} each (same run, same image)`);
    console.log(`  GET ?wait=running&timeout=60 (one request): ${fmt(longPoll)}`);
    console.log(`  polling GET every 1 s (baseline):           ${fmt(polling)}`);
    if (failed) console.log(`  (${failed} of ${2 * N} deployments failed and were not measured)`);
  } finally {
    await svc.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
