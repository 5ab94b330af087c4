import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { temporal as proto } from '@temporalio/proto';

import { freePort } from '@scripts/stack/process';
import { ensureTool } from '@scripts/stack/tools';
import { deploymentWorkflowId } from '@shared/contracts/deployment';
import { createAdminClient } from '@shared/edge/admin';
import { createEdgeRouter } from '@shared/edge/router';

import { spawnApi } from '../helpers/api-process';
import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { exited, spawnWorker } from '../helpers/worker-process';

const root = path.resolve(__dirname, '..', '..');
const { TaskQueueType } = proto.api.enums.v1;

/**
 * The production shape's claims, on real processes: workers on one task queue share the deployments, and api
 * processes behind the router (the very Caddyfile docker-compose.temporal.yml mounts) share the rate limits.
 */
describe('the production shape: two workers on one task queue, two api processes behind the router', () => {
  let h: Harness;
  let image: string;
  const children: ChildProcess[] = [];
  let routerDir: string | undefined;
  /** The router the second test starts, which the third shares with the edge router. */
  let viaRouter = '';
  let routerAdmin = '';
  let apis: ReturnType<typeof spawnApi>[] = [];

  beforeAll(async () => {
    h = await startHarness('topology', { RATE_LIMIT_COMPAT_READS_PER_MIN: '100000' }, { worker: false });
    image = await buildFixtureImage(h.docker, 'hello');
  });
  afterAll(async () => {
    for (const c of children.reverse()) {
      c.kill('SIGTERM');
      await exited(c);
    }
    if (routerDir) fs.rmSync(routerDir, { recursive: true, force: true });
    await h?.stop();
  });

  /** The identities polling the task queue for `type` tasks, as Temporal saw them. */
  const pollers = async (type: proto.api.enums.v1.TaskQueueType) =>
    (
      await h.temporal.workflowService.describeTaskQueue({
        namespace: h.config.TEMPORAL_NAMESPACE,
        taskQueue: { name: h.taskQueue },
        taskQueueType: type,
      })
    ).pollers.map((p) => p.identity ?? '');

  it('runs deployments on both worker processes, and brings every one to running', async () => {
    const workers = [spawnWorker(h), spawnWorker(h)];
    children.push(...workers.map((w) => w.child));
    // A worker's identity is `<pid>@<host>` (the SDK's default): what each activity task's history event names.
    const identities = workers.map((w) => `${w.child.pid}@${os.hostname()}`);
    await eventually(
      async () => {
        const seen = [
          ...(await pollers(TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW)),
          ...(await pollers(TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY)),
        ];
        return identities.every((i) => seen.filter((s) => s === i).length === 2) ? true : undefined;
      },
      `both workers to poll the task queue for workflow and activity tasks (their output: ${workers.map((w) => w.output()).join(' | ')})`,
      180_000,
    );

    const api = client(h, (await h.newOrg()).token);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: `shared-${i}` });
      expect(accepted.status).toBe(202);
      ids.push(accepted.body.deploymentId);
    }
    for (const id of ids) expect((await api.waitFor(id, ['running', 'failed'], 180_000)).status).toBe('running');

    // Who ran each activity, from the deployments' workflow histories.
    const ranBy = new Map<string, number>();
    for (const id of ids) {
      const history = await h.temporal.workflow.getHandle(deploymentWorkflowId(id)).fetchHistory();
      for (const e of history.events ?? []) {
        const who = e.activityTaskStartedEventAttributes?.identity;
        if (who) ranBy.set(who, (ranBy.get(who) ?? 0) + 1);
      }
    }
    expect([...ranBy.keys()].sort()).toEqual([...identities].sort());

    for (const id of ids) expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    await eventually(
      async () => {
        // Several label filters must all match, so ask for the label and pick the ids here.
        const all = await h.docker.listContainers({ all: true, filters: { label: ['dev.slipway.deployment-id'] } });
        return all.some((c) => ids.includes(c.Labels['dev.slipway.deployment-id']!)) ? undefined : true;
      },
      'the containers to be removed',
      120_000,
    );
  });

  it('shares one organisation’s read limit between two api processes the router balances, each serving some', async () => {
    // As the compose file runs them: the router's forwarded address is the client's.
    const env = { RATE_LIMIT_COMPAT_READS_PER_MIN: '20', LOG_LEVEL: 'info', TRUST_PROXY: 'loopback' };
    apis = [spawnApi(h, await freePort(), env), spawnApi(h, await freePort(), env)];
    children.push(...apis.map((a) => a.child));

    const { binary } = await ensureTool('caddy');
    routerDir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-router-'));
    const routerPort = await freePort();
    routerAdmin = `127.0.0.1:${await freePort()}`;
    const router = spawn(
      binary,
      ['run', '--config', path.join(root, 'examples', 'caddy', 'Caddyfile'), '--adapter', 'caddyfile'],
      {
        env: {
          PATH: process.env.PATH,
          HOME: routerDir,
          XDG_DATA_HOME: routerDir,
          XDG_CONFIG_HOME: routerDir,
          CADDY_ADMIN: routerAdmin,
          SLIPWAY_API_ADDRESS: `http://127.0.0.1:${routerPort}`,
          SLIPWAY_API_UPSTREAMS: apis.map((a) => a.base.replace('http://', '')).join(' '),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    let routerLog = '';
    router.stderr.on('data', (c: Buffer) => (routerLog += c.toString()));
    children.push(router);
    viaRouter = `http://127.0.0.1:${routerPort}`;

    // Both api processes ready (a worker of the first test polls), and the router passing requests on.
    for (const a of apis)
      await eventually(
        async () => ((await fetch(`${a.base}/readyz`).catch(() => undefined))?.ok ? true : undefined),
        `the api on ${a.base} to be ready (its output: ${a.output().slice(-2000)})`,
        120_000,
      );
    await eventually(
      async () => ((await fetch(`${viaRouter}/readyz`).catch(() => undefined))?.ok ? true : undefined),
      `the router to answer (its log: ${routerLog.slice(-2000)})`,
      60_000,
    );

    const org = await h.newOrg();
    const statuses: number[] = [];
    for (let i = 0; i < 30; i++) {
      const r = await fetch(`${viaRouter}/compat/deployments`, { headers: { authorization: `Bearer ${org.token}` } });
      await r.arrayBuffer();
      statuses.push(r.status);
    }
    // One budget of 20 for the organisation, whichever process answered.
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toHaveLength(10);

    // Each process's access log: both answered some of the organisation's reads, and together all of them.
    const answered = await eventually(async () => {
      const counts = apis.map((a) =>
        a
          .output()
          .split('\n')
          .filter((l) => l.includes(org.orgId))
          .map((l) => JSON.parse(l) as { orgId?: string; route?: string | null; path?: string; status: number })
          // A refused request is answered before a route matched: its line names the path instead.
          .filter((l) => l.orgId === org.orgId && (l.route ?? l.path) === '/compat/deployments')
          .map((l) => l.status),
      );
      return counts.flat().length === 30 ? counts : undefined;
    }, 'every read to be in an access log');
    for (const served of answered) expect(served.length).toBeGreaterThan(0);
    expect(answered.flat().filter((s) => s === 200)).toHaveLength(20);
  });

  it('counts refused tokens per client address the router forwards, and a client cannot choose its own', async () => {
    expect(apis).toHaveLength(2);
    const bad = (base: string, forwardedFor: string) =>
      fetch(`${base}/compat/deployments`, {
        headers: { authorization: 'Bearer svc_bogus', 'x-forwarded-for': forwardedFor },
      }).then(async (r) => (await r.arrayBuffer(), r.status));
    // From the router's address (loopback, trusted), each forwarded client has its own budget of refused tokens.
    for (let i = 0; i < 20; i++) expect(await bad(apis[i % 2]!.base, '203.0.113.1')).toBe(401);
    expect(await bad(apis[0]!.base, '203.0.113.1')).toBe(429);
    expect(await bad(apis[1]!.base, '203.0.113.2')).toBe(401);
    // Through the router, a forwarded address the client wrote is replaced by the one the router saw: 127.0.0.1's
    // budget, spent by any address it claims.
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push(await bad(viaRouter, `198.51.100.${i}`));
    expect(statuses.slice(0, 20)).toEqual(Array(20).fill(401));
    expect(statuses[20]).toBe(429);
  });

  it('keeps the api site when the worker adds the deployments’ server to the same Caddy', async () => {
    expect(viaRouter).not.toBe('');
    const edgePort = await freePort();
    const edge = createEdgeRouter({ adminUrl: `http://${routerAdmin}`, listen: [`127.0.0.1:${edgePort}`] });
    await edge.ensureServer();
    // Caddy's admin API wants no browser headers (fetch sends some): the edge router's own admin client.
    const servers = await createAdminClient(`http://${routerAdmin}`, 10_000).get<Record<string, { listen: string[] }>>(
      '/config/apps/http/servers',
    );
    // The Caddyfile's site (srv0) and the worker's server, each on its own listener.
    expect(Object.keys(servers ?? {}).sort()).toEqual(['slipway', 'srv0']);
    expect(servers!.slipway!.listen).toEqual([`127.0.0.1:${edgePort}`]);
    // The api still answers through its site, and the edge server answers a host it has no route for with its fallback.
    expect((await fetch(`${viaRouter}/healthz`)).status).toBe(200);
    const unknown = await fetch(`http://127.0.0.1:${edgePort}/`);
    expect(unknown.status).toBe(404);
  });
});
