import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import type Docker from 'dockerode';

import { createEngineLocal } from '@activities/providers/engine-local';
import { failureDetails, type Instance, type InstanceSpec, PROVIDER_FAILURES } from '@activities/providers/provider';
import { LABELS } from '@shared/constants';
import { createDockerClient } from '@shared/engine/docker-client';
import { type EngineStats, metricsFrom } from '@shared/engine/observe';
import { PLAN_POLICIES } from '@shared/plans';

import { buildFixtureImage, buildImageOnce } from '../helpers/images';

const run = promisify(execFile);
const FIXTURES = path.resolve(__dirname, '..', 'fixtures', 'images');
const LIMITS = PLAN_POLICIES.free.limits;

/** Runs a provider call inside an activity context: the readiness wait heartbeats, as it does on the worker. */
const inActivity = <R>(fn: () => Promise<R>) => new MockActivityEnvironment().run(fn);

async function body(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

/** The failure a provider call threw, as the workflow sees it (the ActivityFailure's cause). */
async function failureOf(p: Promise<unknown>): Promise<ApplicationFailure> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ApplicationFailure)) throw new Error(`expected an ApplicationFailure, got ${String(err)}`);
  return err;
}

describe('engine_local provider interface (real Docker Engine)', () => {
  const docker: Docker = createDockerClient(process.env.DOCKER_HOST);
  // Everything this file makes carries this instance label (containers, networks, images) and goes in afterAll.
  const instance = `test-provider-${randomUUID().slice(0, 8)}`;
  const engine = createEngineLocal({ docker, publicHost: '127.0.0.1', bindIp: '127.0.0.1', instance });
  const orgId = randomUUID();
  const tags: string[] = [];
  let hello: string;

  const spec = (deploymentId: string, revision: number, replica: number, over: Partial<InstanceSpec> = {}) => ({
    deploymentId,
    orgId,
    revision,
    replica,
    image: hello,
    port: 8080,
    env: { GREETING: 'hi' },
    limits: LIMITS,
    ...over,
  });

  /** An image labelled as a build of `deploymentId` by this instance, distinct per `n`. */
  async function builtImage(deploymentId: string, n: number, owner = orgId): Promise<string> {
    const tag = `slipway-test/provider-${instance}:${deploymentId.slice(0, 8)}-${n}`;
    tags.push(tag);
    await buildImageOnce(docker, tag, async (context) => {
      await fs.cp(path.join(FIXTURES, 'hello'), context, { recursive: true });
      await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
      await fs.appendFile(
        path.join(context, 'Dockerfile'),
        `\nLABEL ${LABELS.deploymentId}="${deploymentId}" ${LABELS.orgId}="${owner}" ${LABELS.instance}="${instance}" build="${n}"\n`,
      );
    });
    return tag;
  }

  beforeAll(async () => {
    hello = await buildFixtureImage(docker, 'hello');
  });

  afterAll(async () => {
    const mine = { label: [`${LABELS.instance}=${instance}`] };
    for (const c of await docker.listContainers({ all: true, filters: mine }))
      await docker.getContainer(c.Id).remove({ force: true, v: true });
    for (const tag of tags)
      await docker
        .getImage(tag)
        .remove({ force: true })
        .catch(() => undefined);
    for (const i of await docker.listImages({ filters: mine }))
      await docker
        .getImage(i.Id)
        .remove({ force: true })
        .catch(() => undefined);
    for (const n of await docker.listNetworks({ filters: mine })) await docker.getNetwork(n.Id).remove();
  });

  describe('three replicas of one release', () => {
    const dep = randomUUID();
    let started: Instance[];

    beforeAll(async () => {
      started = [];
      for (const replica of [0, 1, 2]) started.push(await engine.startInstance(spec(dep, 1, replica)));
      for (const i of started) await inActivity(() => engine.waitInstanceReady(i, { port: 8080, timeoutS: 30 }));
    });

    it('starts them under deterministic names, lists them, and each upstream serves the app', async () => {
      const listed = await engine.listInstances(dep);
      expect(listed.map((i) => [i.name, i.revision, i.replica, i.state])).toEqual([
        [`slipway-${dep}-r1`, 1, 0, 'running'],
        [`slipway-${dep}-r1-1`, 1, 1, 'running'],
        [`slipway-${dep}-r1-2`, 1, 2, 'running'],
      ]);
      for (const [n, i] of started.entries()) {
        const info = await docker.getContainer(i.id).inspect();
        const hostPort = Number(info.NetworkSettings.Ports['8080/tcp']?.[0]?.HostPort);
        expect(i).toMatchObject({ name: listed[n]!.name, upstream: `127.0.0.1:${hostPort}`, imageId: info.Image });
        expect(listed[n]).toMatchObject({ id: i.id, upstream: i.upstream, restarts: 0, oomKilled: false });
        expect(info.Config.Labels).toMatchObject({
          [LABELS.deploymentId]: dep,
          [LABELS.orgId]: orgId,
          [LABELS.revision]: '1',
          [LABELS.replica]: String(n),
          [LABELS.instance]: instance,
        });
        // The security properties every container had before replicas.
        expect(info.HostConfig).toMatchObject({
          Memory: LIMITS.memoryMb * 1024 * 1024,
          NanoCpus: LIMITS.cpus * 1e9,
          PidsLimit: LIMITS.pids,
          CapDrop: ['ALL'],
          SecurityOpt: ['no-new-privileges'],
        });
        expect(Object.keys(info.NetworkSettings.Networks)).toEqual([`slipway-org-${orgId}`]);
        expect(await body(`http://${i.upstream}/`)).toEqual({ status: 200, text: 'hello from slipway\n' });
      }
      // A retried start finds the container it made.
      expect((await engine.startInstance(spec(dep, 1, 1))).id).toBe(started[1]!.id);
    });

    it('reports health as the engine sees it, with a live HTTP probe, and degrades when one replica is down', async () => {
      const healthy = await engine.health(dep, { port: 8080 });
      expect(healthy.overall).toBe('healthy');
      for (const h of healthy.instances) {
        const info = await docker.getContainer(h.name).inspect();
        expect(h).toMatchObject({
          state: info.State.Status,
          restarts: info.RestartCount,
          startedAt: info.State.StartedAt,
        });
        expect(h.probe).toMatchObject({ ok: true, status: 200 });
        expect(h.probe.latencyMs).toBeGreaterThanOrEqual(0);
      }
      // Stopped behind our back (restart policy still on): meant to run, so the deployment is degraded.
      await docker.getContainer(started[2]!.id).stop({ t: 1 });
      const degraded = await engine.health(dep, { port: 8080 });
      expect(degraded.overall).toBe('degraded');
      expect(degraded.instances[2]).toMatchObject({ state: 'exited', probe: { ok: false, error: 'not running' } });
      // Started again it keeps its container, but the engine publishes it on a new host port.
      const [back] = await engine.startInstances(dep, { revision: 1, replicasFrom: 2 });
      expect(back).toMatchObject({ id: started[2]!.id, name: started[2]!.name });
      await inActivity(() => engine.waitInstanceReady(back!, { port: 8080, timeoutS: 30 }));
      started[2] = back!;
    });

    it('reads metrics from the engine’s stats as docker stats computes them', async () => {
      for (const i of started) await body(`http://${i.upstream}/`);
      const metrics = await engine.metrics(dep);
      expect(metrics.map((m) => m.replica)).toEqual([0, 1, 2]);
      for (const [n, m] of metrics.entries()) {
        const after = (await docker.getContainer(started[n]!.id).stats({ stream: false })) as unknown as EngineStats;
        expect(m.memoryLimitBytes).toBe(LIMITS.memoryMb * 1024 * 1024);
        expect(m.memoryLimitBytes).toBe(after.memory_stats.limit);
        expect(m.onlineCpus).toBe(after.cpu_stats.online_cpus);
        expect(m.pids).toBe(after.pids_stats?.current);
        // Counters only grow: what we read lies between zero (we sent it requests) and a later read.
        const later = metricsFrom(after);
        expect(m.networkRxBytes).toBeGreaterThan(0);
        expect(m.networkRxBytes).toBeLessThanOrEqual(later.networkRxBytes);
        expect(m.networkTxBytes).toBeGreaterThan(0);
        expect(m.networkTxBytes).toBeLessThanOrEqual(later.networkTxBytes);
        expect(m.blockReadBytes).toBeLessThanOrEqual(later.blockReadBytes);
        expect(m.memoryBytes).toBeGreaterThan(0);
        expect(m.memoryBytes).toBeLessThanOrEqual(m.memoryLimitBytes);
        expect(m.cpuPercent).toBeGreaterThanOrEqual(0);
        expect(m.cpuPercent).toBeLessThanOrEqual(m.onlineCpus * 100);
      }
      // The docker CLI shows the same limit and process count for the same container.
      const { stdout } = await run('docker', [
        'stats',
        '--no-stream',
        '--format',
        '{{.MemUsage}}|{{.PIDs}}',
        started[0]!.id,
      ]);
      const [usage, pids] = stdout.trim().split('|');
      expect(usage).toMatch(/ \/ 256MiB$/);
      expect(Number(pids)).toBe(metrics[0]!.pids);
    });

    it('returns the instances’ log lines, each naming its instance', async () => {
      await body(`http://${started[1]!.upstream}/`);
      const one = await engine.logs(dep, { tail: 100, instance: started[1]!.name });
      expect(one.length).toBeGreaterThan(0);
      expect(new Set(one.map((l) => l.instance))).toEqual(new Set([started[1]!.name]));
      const all = await engine.logs(dep, { tail: 100 });
      expect(new Set(all.map((l) => l.instance)).size).toBe(3);
      expect(await engine.logs(dep, { tail: 100, since: Math.ceil(Date.now() / 1000) + 3600 })).toEqual([]);
    });

    it('stops them (exited, kept), then starts the same containers again, reachable on their upstreams', async () => {
      expect(await engine.stopInstances(dep)).toBe(3);
      const stopped = await engine.listInstances(dep);
      expect(stopped.map((i) => [i.name, i.state, i.upstream])).toEqual(started.map((i) => [i.name, 'exited', null]));
      for (const i of stopped)
        expect((await docker.getContainer(i.id).inspect()).HostConfig.RestartPolicy?.Name).toBe('no');
      expect((await engine.health(dep, { port: 8080 })).overall).toBe('stopped');
      expect(await engine.stopInstances(dep)).toBe(3); // idempotent

      const again = await engine.startInstances(dep);
      expect(again.map((i) => [i.id, i.name])).toEqual(started.map((i) => [i.id, i.name]));
      for (const i of again) {
        await inActivity(() => engine.waitInstanceReady(i, { port: 8080, timeoutS: 30 }));
        expect(await body(`http://${i.upstream}/`)).toEqual({ status: 200, text: 'hello from slipway\n' });
        expect((await docker.getContainer(i.id).inspect()).HostConfig.RestartPolicy?.Name).toBe('unless-stopped');
      }
      expect((await engine.health(dep, { port: 8080 })).overall).toBe('healthy');
      started = again;
    });

    it('removes by revision and by replica index, leaving the rest', async () => {
      const next = [];
      for (const replica of [0, 1, 2]) next.push(await engine.startInstance(spec(dep, 2, replica)));
      expect(await engine.removeInstances(dep, { revision: 2, replicasFrom: 1 })).toBe(2);
      expect(await engine.removeInstances(dep, { exceptRevision: 2 })).toBe(3);
      expect((await engine.listInstances(dep)).map((i) => [i.name, i.revision])).toEqual([[next[0]!.name, 2]]);
      expect(await engine.removeInstances(dep, { exceptRevision: 2 })).toBe(0);
      expect(await engine.destroy(dep)).toBe(1);
      expect(await engine.listInstances(dep)).toEqual([]);
    });
  });

  it('fails the wait for an app that exits with its exit code and last lines', async () => {
    const dep = randomUUID();
    const crash = await buildFixtureImage(docker, 'crash');
    // The exit may be seen by the start itself or by the wait: both are the same typed failure.
    const err = await failureOf(
      inActivity(async () => {
        const i = await engine.startInstance(spec(dep, 1, 0, { image: crash }));
        await engine.waitInstanceReady(i, { port: 8080, timeoutS: 30 });
      }),
    );
    expect(err.type).toBe(PROVIDER_FAILURES.containerExited);
    expect(err.nonRetryable).toBe(true);
    expect(failureDetails(err)).toMatchObject({
      instance: `slipway-${dep}-r1`,
      exitCode: 3,
      oomKilled: false,
      lastLines: expect.arrayContaining(['boom: missing DATABASE_URL']),
      hint: expect.stringMatching(/exited with code 3/),
    });
    const [listed] = await engine.listInstances(dep);
    // It crash-loops under its restart policy: the count read lies between the engine's before and after.
    const before = (await docker.getContainer(listed!.id).inspect()).RestartCount;
    const d = await engine.diagnose(listed!);
    const after = (await docker.getContainer(listed!.id).inspect()).RestartCount;
    expect(d).toMatchObject({ exitCode: 3, lastLines: expect.arrayContaining(['boom: missing DATABASE_URL']) });
    expect(d.restarts).toBeGreaterThanOrEqual(before);
    expect(d.restarts).toBeLessThanOrEqual(after);
    // After a few restarts the log holds the crash once per run; the evidence holds it once.
    const container = docker.getContainer(listed!.id);
    for (let i = 0; (await container.inspect()).RestartCount < 2; i++) {
      if (i > 300) throw new Error('the crash fixture did not restart twice within a minute');
      await new Promise((r) => setTimeout(r, 200));
    }
    const { stderr } = await run('docker', ['logs', listed!.id]);
    expect(stderr.split('\n').filter((l) => l === 'boom: missing DATABASE_URL').length).toBeGreaterThanOrEqual(2);
    const again = await engine.diagnose(listed!);
    expect(again.lastLines.filter((l) => l === 'boom: missing DATABASE_URL')).toHaveLength(1);
    await engine.destroy(dep);
  });

  it('fails the wait for an app listening on another port as "port never opened"', async () => {
    const dep = randomUUID();
    const i = await engine.startInstance(spec(dep, 1, 0, { port: 9999 }));
    const err = await failureOf(inActivity(() => engine.waitInstanceReady(i, { port: 9999, timeoutS: 2 })));
    expect(err.type).toBe(PROVIDER_FAILURES.portNeverOpened);
    expect(err.message).toMatch(/^nothing answered on port 9999 within 2 s/);
    // The hint names the port the app really listens on (read from its network namespace).
    expect(failureDetails(err)).toMatchObject({
      instance: i.name,
      hint: expect.stringMatching(/listens on port 8080, but the deployment says 9999/),
    });
    expect(failureDetails(err)?.exitCode).toBeUndefined();
    await engine.destroy(dep);
  });

  it('fails the wait at once for an app settled on another port, long before the readiness window ends', async () => {
    const dep = randomUUID();
    const i = await engine.startInstance(spec(dep, 1, 0, { port: 9999 }));
    // A window far beyond this test's own time limit: only giving up early can pass.
    const err = await failureOf(inActivity(() => engine.waitInstanceReady(i, { port: 9999, timeoutS: 600 })));
    expect(err.type).toBe(PROVIDER_FAILURES.portNeverOpened);
    expect(err.message).toMatch(
      /^nothing answered on port 9999: the app listens on port 8080 instead \(unchanged for \d+ s\)/,
    );
    expect(err.message).not.toMatch(/within 600 s/);
    expect(failureDetails(err)).toMatchObject({
      instance: i.name,
      hint: expect.stringMatching(/listens on port 8080, but the deployment says 9999/),
    });
    await engine.destroy(dep);
  }, 60_000);

  it('fails the wait for a port that accepts connections but never answers HTTP as "app not answering"', async () => {
    const dep = randomUUID();
    const silent = `slipway-test/provider-${instance}:silent`;
    tags.push(silent);
    // Accepts every connection and holds it open without a byte: TCP-ready, never an HTTP answer.
    await buildImageOnce(docker, silent, async (context) => {
      await fs.copyFile('/bin/busybox', path.join(context, 'busybox'));
      await fs.writeFile(
        path.join(context, 'Dockerfile'),
        'FROM scratch\nCOPY busybox /bin/busybox\nENTRYPOINT ["/bin/busybox", "nc", "-ll", "-p", "8080", "-e", "/bin/busybox", "sleep", "600"]\n',
      );
    });
    const i = await engine.startInstance(spec(dep, 1, 0, { image: silent }));
    const err = await failureOf(inActivity(() => engine.waitInstanceReady(i, { port: 8080, timeoutS: 3 })));
    expect(err.type).toBe(PROVIDER_FAILURES.appNotAnswering);
    expect(failureDetails(err)).toMatchObject({ instance: i.name, hint: expect.stringMatching(/answer HTTP/) });
    // Without the HTTP check (workflows from before the provider interface) an open port is ready.
    await inActivity(() => engine.waitInstanceReady(i, { port: 8080, timeoutS: 3, http: false }));
    expect((await engine.health(dep, { port: 8080 })).instances[0]!.probe).toMatchObject({
      ok: false,
      error: 'timed out after 2000 ms',
    });
    await engine.destroy(dep);
  });

  it('runs a release’s recorded image after its tag moved on, and never another organisation’s by ID', async () => {
    const dep = randomUUID();
    const moving = `slipway-test/provider-${instance}:moving`;
    tags.push(moving);
    const first = await docker.getImage(await builtImage(dep, 1)).inspect();
    await docker.getImage(await builtImage(dep, 2)).tag({ repo: moving.split(':')[0]!, tag: 'moving' });
    const i = await engine.startInstance(spec(dep, 1, 0, { image: moving, imageId: first.Id }));
    expect(i.imageId).toBe(first.Id);
    expect((await docker.getContainer(i.id).inspect()).Image).toBe(first.Id);

    const foreign = await docker.getImage(await builtImage(randomUUID(), 3, randomUUID())).inspect();
    const err = await failureOf(engine.startInstance(spec(dep, 2, 0, { image: moving, imageId: foreign.Id })));
    expect(err.type).toBe(PROVIDER_FAILURES.imageNotFound);
    await engine.destroy(dep);
  });

  it('prunes the deployment’s own unused images, keeping the kept ones, the used ones and everyone else’s', async () => {
    const dep = randomUUID();
    const ids: string[] = [];
    for (const n of [11, 12, 13, 14]) ids.push((await docker.getImage(await builtImage(dep, n)).inspect()).Id);
    const helloId = (await docker.getImage(hello).inspect()).Id;
    // Release 4 runs from the fourth image: in use, so never pruned even though it is not in `keep`.
    await engine.startInstance(spec(dep, 4, 0, { image: tags[tags.length - 1]! }));
    const { removed } = await engine.pruneImages(dep, [ids[0]!, ids[2]!]);
    expect(removed).toEqual([ids[1]]);
    const present = async (id: string) =>
      docker
        .getImage(id)
        .inspect()
        .then(
          () => true,
          () => false,
        );
    expect(await Promise.all([...ids, helloId].map(present))).toEqual([true, false, true, true, true]);
    expect((await engine.pruneImages(dep, [ids[0]!, ids[2]!])).removed).toEqual([]);
    await engine.destroy(dep);
  });
});
