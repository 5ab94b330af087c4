// What held event streams and `?wait=` reads of one token cost everyone else: another organisation's
// GET /platform/projects/{id} latency with nothing held, with BENCH_STREAMS (100) event streams held on
// BENCH_DEPLOYMENTS (4) deployments that stay deploying, with as many held `?wait=` reads, and after, over a
// database holding BENCH_LOG_LINES (50,000) log lines of other deployments. Prints p50/p99 side by side; never asserts. Run: node --import tsx bench/streams.ts
import fs from 'node:fs/promises';
import path from 'node:path';

import { connectMongo } from '@shared/db/mongo';
import { createLogStore } from '@shared/deployments/logs-store';
import { createDockerClient } from '@shared/engine/docker-client';
import { createIdentityService } from '@shared/identity/service';
import { createIdentityStore } from '@shared/identity/store';
import { buildImageOnce } from '@test/helpers/images';

import { percentile, startService, until } from './harness';

const STREAMS = Number(process.env.BENCH_STREAMS ?? 100);
const DEPLOYMENTS = Number(process.env.BENCH_DEPLOYMENTS ?? 4);
/** Each phase's sequential reads by the other organisation: this many, or as many as fit in PHASE_S seconds. */
const READS = Number(process.env.BENCH_N ?? 2000);
const PHASE_S = Number(process.env.BENCH_PHASE_S ?? 15);
/**
 * Build and system lines of other deployments already stored, as a service that has been building for a while holds:
 * what a follower's read of its own new lines is made against.
 */
const HISTORY_LINES = Number(process.env.BENCH_LOG_LINES ?? 50_000);
/** Held streams send their history at once; the measure is of what they cost afterwards, while nothing happens. */
const SETTLE_MS = 2_000;

/** Listens on nothing and never exits: its deployment stays `deploying` until the (raised) ready timeout. */
const NEVER_READY = 'slipway-bench/never-ready:latest';

async function main() {
  const docker = createDockerClient(process.env.DOCKER_HOST);
  await buildImageOnce(docker, NEVER_READY, async (context) => {
    await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
    await fs.writeFile(
      path.join(context, 'Dockerfile'),
      'FROM scratch\nCOPY busybox /bin/busybox\nEXPOSE 8080\nENTRYPOINT ["/bin/busybox", "sleep", "3600"]\n',
    );
  });
  const svc = await startService({ DEPLOY_READY_TIMEOUT_S: '3600' });
  const held = new AbortController();
  try {
    const database = await connectMongo(
      String((svc.env as Record<string, unknown>).MONGODB_URL ?? process.env.MONGODB_URL),
      'slipway',
    );
    const other = await createIdentityService({ store: createIdentityStore(database.db) }).bootstrap({
      orgName: 'bench-other',
      plan: 'enterprise',
    });
    const logs = createLogStore(database.db);
    for (let i = 0; i < HISTORY_LINES; i += 500)
      await logs.append(
        `history-${i % 100}`,
        'build',
        Array.from({ length: Math.min(500, HISTORY_LINES - i) }, (_, n) => `step ${n}: done`),
      );
    await database.close();
    const call = async (token: string, method: string, p: string, body?: unknown, signal?: AbortSignal) => {
      const r = await fetch(`${svc.base}${p}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
      const text = await r.text();
      return {
        status: r.status,
        body: (text ? JSON.parse(text) : {}) as Record<string, unknown> & { data?: { id?: string } },
      };
    };

    const project = await call(other.token, 'POST', '/platform/projects', { name: 'bench-other' });
    const projectId = String(project.body.data?.id ?? project.body.id);
    const ids: string[] = [];
    for (let i = 0; i < DEPLOYMENTS; i++) {
      const r = await call(svc.org.token, 'POST', '/compat/deploy', { image: NEVER_READY, name: `held-${i}` });
      ids.push(String(r.body.deploymentId));
    }
    for (const id of ids)
      await until(async () =>
        (await call(svc.org.token, 'GET', `/compat/deployments/${id}`)).body.status === 'deploying' ? true : undefined,
      );

    /** The other organisation's reads, one after another: p50 and p99 in ms. */
    async function measure(seconds = PHASE_S) {
      const ms: number[] = [];
      const deadline = Date.now() + seconds * 1000;
      for (let i = 0; i < READS && Date.now() < deadline; i++) {
        const t0 = performance.now();
        const r = await call(other.token, 'GET', `/platform/projects/${projectId}`);
        if (r.status !== 200) throw new Error(`GET /platform/projects answered ${r.status}`);
        ms.push(performance.now() - t0);
      }
      return { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms) };
    }

    await measure(3); // warm-up: connections, caches, the JIT
    const idle = await measure();

    // Event streams, each read until its first event (the deployment's history), then left open.
    let open = 0;
    await Promise.all(
      Array.from({ length: STREAMS }, async (_, i) => {
        const res = await fetch(`${svc.base}/platform/deployments/${ids[i % ids.length]}/events`, {
          headers: { authorization: `Bearer ${svc.org.token}` },
          signal: held.signal,
        });
        const reader = res.body!.getReader();
        await reader.read();
        open++;
        // Drained in the background until the bench ends it; one that ends by itself no longer counts as held.
        void (async () => {
          for (;;) if ((await reader.read()).done) return;
        })()
          .catch(() => undefined)
          .finally(() => open--);
      }),
    );
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const streams = await measure();
    const streamsHeld = open;
    held.abort();

    const waiting = new AbortController();
    let pending = 0;
    const waits = Array.from({ length: STREAMS }, (_, i) => {
      pending++;
      return call(
        svc.org.token,
        'GET',
        `/compat/deployments/${ids[i % ids.length]}?wait=running&timeout=120`,
        undefined,
        waiting.signal,
      )
        .catch(() => undefined)
        .finally(() => pending--);
    });
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const waited = await measure();
    const waitsHeld = pending;
    waiting.abort();
    await Promise.all(waits);
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const after = await measure();

    const row = (name: string, m: { n: number; p50: number; p99: number; max: number }) =>
      `${name.padEnd(44)} p50 ${m.p50.toFixed(1).padStart(7)} ms  p99 ${m.p99.toFixed(1).padStart(7)} ms  max ${m.max.toFixed(1).padStart(7)} ms  n=${m.n}  (${(m.p50 / idle.p50).toFixed(2)}x idle p50)`;
    console.log(
      `\nSlipway held-streams benchmark (${new Date().toISOString()}, ${process.arch}, node ${process.version})`,
    );
    console.log(
      `another org's GET /platform/projects/{id}, sequential, ${PHASE_S} s per phase (${HISTORY_LINES} stored log lines):`,
    );
    console.log(row('nothing held', idle));
    // Counted at the end of each phase: a deployment that settled would have ended its streams and waits.
    console.log(row(`${streamsHeld} event streams held (${DEPLOYMENTS} deployments)`, streams));
    console.log(row(`${waitsHeld} ?wait= reads held`, waited));
    console.log(row('after (all released)', after));

    for (const id of ids) await call(svc.org.token, 'DELETE', `/compat/deployments/${id}`);
    await until(async () => {
      const left = await docker.listContainers({
        all: true,
        filters: { label: [`dev.slipway.org-id=${svc.org.orgId}`] },
      });
      return left.length === 0 ? true : undefined;
    }, 120_000);
  } finally {
    held.abort();
    await svc.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
