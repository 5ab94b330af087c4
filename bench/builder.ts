// Builder sandbox: time from a file save to the preview serving it, one changed file synced by copy into the
// running container (median of BENCH_N, default 10), next to a full rebuild of the same sandbox (a new container
// with every file copied, as after a crash or a configuration change), measured the same way.
import { randomUUID } from 'node:crypto';

import { request } from 'undici';

import { SANDBOX_SESSION_LABEL } from '@shared/builder/sandbox-store';
import { createDockerClient } from '@shared/engine/docker-client';

import { median, percentile, startService } from './harness';

const N = Number(process.env.BENCH_N ?? 10);
/** Files besides index.html: a small site's assets, so a full copy has something to copy. */
const ASSETS = 40;

async function main() {
  const svc = await startService();
  const headers = { authorization: `Bearer ${svc.org.token}`, 'content-type': 'application/json' };
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${svc.base}/platform${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json()) as { data: T; message?: string };
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${json.message}`);
    return json.data;
  };
  let sid: string | undefined;
  try {
    const project = await call<{ id: string }>('POST', '/projects', { name: `bench-${randomUUID().slice(0, 8)}` });
    const session = await call<{ id: string }>('POST', '/builder/sessions', { projectId: project.id });
    sid = session.id;
    const asset = 'x'.repeat(2048);
    await call('PUT', `/builder/sessions/${sid}/files`, {
      files: [
        { path: 'index.html', content: 'start' },
        ...Array.from({ length: ASSETS }, (_, i) => ({ path: `assets/a${i}.css`, content: `/* ${i} */ ${asset}` })),
      ],
    });
    await call('PUT', `/builder/sessions/${sid}/sandbox`, { runtime: 'static' });
    type Sync = { action: string; copied: number; error: string | null };
    type Progress = { state: 'running' | 'ended'; url: string; sync: Sync | null; sandbox: { previewUrl: string } };
    // A sync answers within a few seconds; one still running (202) is followed at its url until it has ended.
    const syncNow = async () => {
      let r = await call<Progress>('POST', `/builder/sessions/${sid}/sandbox/sync`, {});
      while (r.state === 'running') r = await call<Progress>('GET', r.url.replace(/^\/platform/, ''));
      return { ...r, sync: r.sync! };
    };
    const first = await syncNow();
    const host = new URL(first.sandbox.previewUrl).host.split(':')[0]!;
    const edge = `http://127.0.0.1:${(svc.env as Record<string, string | undefined>).EDGE_PORT}/`;
    const serves = async (text: string) => {
      for (;;) {
        const res = await request(edge, { headers: { host }, reset: true }).catch(() => undefined);
        const body = res ? await res.body.text() : '';
        if (body === text) return;
        await new Promise((r) => setTimeout(r, 5));
      }
    };

    const measure = async (before?: (i: number) => Promise<void>) => {
      const times: number[] = [];
      const actions = new Set<string>();
      for (let i = 0; i < N; i++) {
        const nonce = `v-${randomUUID()}`;
        const t0 = performance.now();
        await before?.(i);
        await call('PUT', `/builder/sessions/${sid}/files`, { files: [{ path: 'index.html', content: nonce }] });
        const r = await syncNow();
        if (r.sync.error) throw new Error(r.sync.error);
        actions.add(`${r.sync.action} (${r.sync.copied} files)`);
        await serves(nonce);
        times.push(performance.now() - t0);
      }
      return { times, actions: [...actions].join(', ') };
    };

    const copy = await measure();
    // A configuration change makes the next sync build a new container and copy every file into it.
    const rebuild = await measure((i) =>
      call('PUT', `/builder/sessions/${sid}/sandbox`, { runtime: 'static', env: { BENCH_ROUND: String(i) } }).then(
        () => undefined,
      ),
    );
    const fmt = (t: number[]) => `median ${median(t).toFixed(0)} ms, p90 ${percentile(t, 90).toFixed(0)} ms`;
    console.log(`builder sandbox, save → preview serves it (n=${N}, ${ASSETS + 1} files, static runtime):`);
    console.log(`  sync of one changed file:  ${fmt(copy.times)}   [${copy.actions}]`);
    console.log(`  full rebuild (baseline):   ${fmt(rebuild.times)}   [${rebuild.actions}]`);
    console.log(`  ratio: ${(median(rebuild.times) / median(copy.times)).toFixed(1)}× faster by copy`);
  } finally {
    // The sandbox container and its org network are the engine's, not the throwaway stack's.
    const docker = createDockerClient(process.env.DOCKER_HOST);
    const left = sid
      ? await docker.listContainers({ all: true, filters: { label: [`${SANDBOX_SESSION_LABEL}=${sid}`] } })
      : [];
    for (const c of left)
      await docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => undefined);
    const nets = await docker.listNetworks({ filters: { name: [`slipway-org-${svc.org.orgId}`] } });
    for (const n of nets)
      await docker
        .getNetwork(n.Id)
        .remove()
        .catch(() => undefined);
    await svc.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
