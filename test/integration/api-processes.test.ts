import { type ChildProcess, execFile } from 'node:child_process';
import { promisify } from 'node:util';

import { freePort } from '@scripts/stack/process';

import { spawnApi } from '../helpers/api-process';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { exited } from '../helpers/worker-process';

const run = promisify(execFile);

/** The real api entry point as a cluster of `processes`; the harness's reads budget is the file's own. */
const spawnCluster = (h: Harness, port: number, processes: number) =>
  spawnApi(h, port, { API_PROCESSES: String(processes), RATE_LIMIT_COMPAT_READS_PER_MIN: '100000' });

/** The node processes a cluster primary forked. */
async function forkedPids(pid: number): Promise<number[]> {
  const out = await run('ps', ['-o', 'pid=,comm=', '--ppid', String(pid)]).catch(() => ({ stdout: '' }));
  return out.stdout
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, comm]) => comm === 'node')
    .map(([p]) => Number(p));
}

/** Which processes hold the connections accepted on `port` (`ss -p` names the process owning each socket). */
async function pidsServing(port: number): Promise<Set<number>> {
  const { stdout } = await run('ss', ['-Htnp', 'state', 'established', `( sport = :${port} )`]);
  return new Set([...stdout.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1])));
}

describe('several api processes on the same data', () => {
  let h: Harness;
  let image: string;
  const apis: ReturnType<typeof spawnCluster>[] = [];

  beforeAll(async () => {
    h = await startHarness('api-processes', { RATE_LIMIT_COMPAT_READS_PER_MIN: '100000' });
    image = await buildFixtureImage(h.docker, 'slow-hello');
  });
  afterAll(async () => {
    for (const a of apis) {
      a.child.kill('SIGTERM');
      await exited(a.child as ChildProcess);
    }
    await h?.stop();
  });

  it('serve one deployment from a cluster of two and a separate process, and wake every follower when the worker moves it', async () => {
    const clusterPort = await freePort();
    const cluster = spawnCluster(h, clusterPort, 2);
    const other = spawnCluster(h, await freePort(), 1);
    apis.push(cluster, other);
    for (const a of [cluster, other])
      await eventually(
        async () => ((await fetch(`${a.base}/healthz`).catch(() => undefined))?.ok ? true : undefined),
        `the api on ${a.base} to answer (its output: ${a.output()})`,
        90_000,
      );
    const forked = await eventually(async () => {
      const pids = await forkedPids(cluster.child.pid!);
      return pids.length === 2 ? pids : undefined;
    }, 'the cluster primary to run two api processes');

    const { token } = await h.newOrg();
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const accepted = await fetch(`${cluster.base}/compat/deploy`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ image, name: 'shared' }),
    });
    expect(accepted.status).toBe(202);
    const { deploymentId } = (await accepted.json()) as { deploymentId: string };

    // Written through the cluster, read through the other process: the same record.
    const read = await fetch(`${other.base}/compat/deployments/${deploymentId}`, { headers });
    expect(read.status).toBe(200);
    expect(((await read.json()) as { id: string }).id).toBe(deploymentId);

    // Long-polls, each on a connection of its own as they are held at once, while the app starts (it listens only after 6 s): the cluster hands
    // connections to its processes in turn, so both of its processes hold some, and the other process holds one.
    const waits = [cluster, cluster, cluster, cluster, other].map((a) =>
      fetch(`${a.base}/compat/deployments/${deploymentId}?wait=running&timeout=120`, {
        headers,
      }).then(async (r) => ({ status: r.status, body: (await r.json()) as { status: string } })),
    );
    const holders = await eventually(async () => {
      const pids = await pidsServing(clusterPort);
      return forked.every((p) => pids.has(p)) ? pids : undefined;
    }, 'both api processes of the cluster to hold a long-poll');
    expect([...holders].filter((p) => forked.includes(p)).sort()).toEqual([...forked].sort());

    // The worker (in this test's process) moves the deployment to running; every held follower answers it.
    const answers = await Promise.all(waits);
    for (const a of answers) expect(a).toEqual({ status: 200, body: expect.objectContaining({ status: 'running' }) });

    const gone = await fetch(`${other.base}/compat/deployments/${deploymentId}`, { method: 'DELETE', headers });
    expect(gone.status).toBe(204);
  });

  it('replaces a cluster process that dies', async () => {
    const cluster = apis[0]!;
    const before = await forkedPids(cluster.child.pid!);
    expect(before).toHaveLength(2);
    process.kill(before[0]!, 'SIGKILL');
    const after = await eventually(async () => {
      const pids = await forkedPids(cluster.child.pid!);
      return pids.length === 2 && !pids.includes(before[0]!) ? pids : undefined;
    }, 'the primary to start another api process');
    expect(after).toContain(before[1]);
    expect((await fetch(`${cluster.base}/healthz`)).ok).toBe(true);
  });

  it('stops with all its processes on SIGTERM', async () => {
    const cluster = apis[0]!;
    const forked = await forkedPids(cluster.child.pid!);
    expect(forked).toHaveLength(2);
    cluster.child.kill('SIGTERM');
    await exited(cluster.child);
    expect(cluster.child.exitCode).toBe(0);
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        // ESRCH: no such process.
        return false;
      }
    };
    expect(forked.filter(alive)).toEqual([]);
  });
});
