import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';

import { WorkflowUpdateFailedError, type WorkflowUpdateHandle, WorkflowUpdateStage } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import { request } from 'undici';

import { createDeploymentCommands } from '@api/features/deployments/commands';
import { LABELS } from '@shared/constants';
import {
  COMMAND_REFUSED,
  type CommandOutcome,
  commandsQuery,
  deploymentWorkflowId,
  redeployCommand,
  rollbackCommand,
  scaleCommand,
  startCommand,
  stopCommand,
} from '@shared/contracts/deployment';
import { createDeploymentStore } from '@shared/deployments/store';
import { createEnvSealer } from '@shared/secrets/deployment-env';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { carriesSecret, historyToJSON } from '../helpers/history-json';
import { buildFixtureImage } from '../helpers/images';
import { exited, spawnWorker } from '../helpers/worker-process';

interface Deployment {
  status: string;
  url: string;
  envVarNames: string[];
  events: { status: string; message: string }[];
}

/** What a user's client does with a *.localhost URL: connect to loopback and send the URL's host. */
async function open(url: string, path = '/') {
  const u = new URL(url);
  const res = await request(`http://127.0.0.1:${u.port || 80}${path}`, { headers: { host: u.host } });
  return { status: res.statusCode, text: await res.body.text() };
}

/** The commands a caller sends: accepted at once (the 202 of the api), then followed to their end. */
function commander(h: Harness) {
  const store = createDeploymentStore(h.db);
  const sealer = createEnvSealer(h.config.SECRETS_KEY);
  const send = <A extends unknown[]>(id: string, def: UpdateDefinition<CommandOutcome, A>, ...args: A) => {
    // startUpdate's overloads split updates with and without arguments; one helper serves both.
    const start = h.temporal.workflow.getHandle(deploymentWorkflowId(id)).startUpdate as (
      d: unknown,
      o: unknown,
    ) => Promise<WorkflowUpdateHandle<CommandOutcome>>;
    return start(def, { args, waitForStage: WorkflowUpdateStage.ACCEPTED });
  };
  return {
    send,
    run: async <A extends unknown[]>(id: string, def: UpdateDefinition<CommandOutcome, A>, ...args: A) =>
      (await send(id, def, ...args)).result(),
    /** The api's part of a redeploy: the values sealed into an env set, the command naming it. */
    async envSet(id: string, orgId: string, env: Record<string, string>) {
      const envRef = randomUUID();
      const envSealed = sealer.seal({ _id: id, orgId }, env);
      await store.releases.putEnvSet({
        _id: envRef,
        deploymentId: id,
        orgId,
        envNames: Object.keys(env).sort(),
        ...(envSealed ? { envSealed } : {}),
        createdAt: new Date(),
      });
      return { envRef, envNames: Object.keys(env).sort() };
    },
    record: (id: string) => store.findAny(id),
    releases: (id: string) => store.releases.list(id, { limit: 50, offset: 0 }),
  };
}

/**
 * The refusal a validator answered with: the update failed as CommandRefused and was never accepted (no
 * acceptance in the workflow's history, so nothing of it ran).
 */
async function refusal(h: Harness, sent: Promise<WorkflowUpdateHandle<CommandOutcome>>): Promise<string> {
  const handle = await sent;
  const err = await handle.result().then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof WorkflowUpdateFailedError)) throw new Error(`expected a refused update, got ${String(err)}`);
  expect(err.cause).toMatchObject({ type: COMMAND_REFUSED });
  const history = await h.temporal.workflow.getHandle(handle.workflowId).fetchHistory();
  const accepted = (history.events ?? []).filter(
    (e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.meta?.updateId === handle.updateId,
  );
  expect(accepted).toHaveLength(0);
  return (err.cause as Error).message;
}

describe('deployment commands (Updates on the entity workflow, real Temporal, engine and edge router)', () => {
  let h: Harness;
  let image: string;
  let cmd: ReturnType<typeof commander>;

  beforeAll(async () => {
    // Three commands per run: a deployment given more continues as new, carrying its state across.
    h = await startHarness('commands', {
      RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
      DEPLOY_READY_TIMEOUT_S: '20',
      DEPLOYMENT_COMMANDS_PER_RUN: '3',
    });
    image = await buildFixtureImage(h.docker, 'env-hello');
    cmd = commander(h);
  });
  afterAll(() => h?.stop());

  const containers = (id: string) =>
    h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } });
  const runningContainers = async (id: string) => (await containers(id)).filter((c) => c.State === 'running');

  async function deploy(env: Record<string, string> = { GREETING: 'hello' }) {
    const { token, orgId } = await h.newOrg('pro');
    const api = client(h, token);
    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', {
      image,
      name: `cmd-${randomUUID().slice(0, 6)}`,
      port: 8080,
      envVars: env,
    });
    expect(accepted.status).toBe(202);
    const id = accepted.body.deploymentId;
    const running = (await api.waitFor(id, ['running', 'failed'])) as unknown as Deployment;
    expect(running.status).toBe('running');
    const get = async () => (await api.get<Deployment>(`/compat/deployments/${id}`)).body;
    return { id, orgId, token, api, get, url: running.url };
  }

  it('stop, then start: containers stopped, the router answers 503, then the same URL serves again', async () => {
    const d = await deploy();
    expect(d.url).toMatch(/^http:\/\/cmd-[a-z0-9-]+\.localhost:\d+$/);
    const before = await open(d.url);
    expect(before.status).toBe(200);

    const stopped = await cmd.run(d.id, stopCommand);
    expect(stopped).toMatchObject({ command: 'stop', status: 'stopped' });
    expect((await d.get()).status).toBe('stopped');
    expect(await runningContainers(d.id)).toHaveLength(0);
    expect(await containers(d.id)).toHaveLength(1);
    expect((await open(d.url)).status).toBe(503);

    expect(await cmd.run(d.id, startCommand)).toMatchObject({ status: 'running' });
    const after = await d.get();
    expect(after).toMatchObject({ status: 'running', url: d.url });
    expect(await runningContainers(d.id)).toHaveLength(1);
    // The same container again: its hostname is what it serves.
    expect(await open(d.url)).toEqual(before);
  });

  it('refuses what the status does not allow, with the status and what is allowed, and changes nothing', async () => {
    const d = await deploy();
    const versionOf = async () => (await cmd.record(d.id))!.version;
    const v = await versionOf();
    expect(await refusal(h, cmd.send(d.id, startCommand))).toMatch(
      /is running, so it cannot start.*accepts stop, redeploy, scale, rollback, destroy/,
    );
    expect(await refusal(h, cmd.send(d.id, scaleCommand, { replicas: 6, maxReplicas: 5 }))).toMatch(/from 0 to 5/);
    expect(await refusal(h, cmd.send(d.id, rollbackCommand, {}))).toMatch(/No earlier release/);
    expect(await refusal(h, cmd.send(d.id, rollbackCommand, { revision: 7 }))).toMatch(/Release 7 is not among/);
    expect(await versionOf()).toBe(v);
    expect(await runningContainers(d.id)).toHaveLength(1);

    await cmd.run(d.id, stopCommand);
    const stoppedAt = await versionOf();
    expect(await refusal(h, cmd.send(d.id, stopCommand))).toMatch(/is stopped, so it cannot stop.*accepts start/);
    expect(await versionOf()).toBe(stoppedAt);
    expect(await containers(d.id)).toHaveLength(1);
  });

  it('redeploy with a new env: a new container beside the old takes over, and the record shows the new names', async () => {
    const d = await deploy({ GREETING: 'hello' });
    const oldHost = (await open(d.url)).text;
    // A client polling every 50 ms through the whole switch, on a new connection each time as fetch does here.
    const answers: number[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        answers.push(
          await fetch(d.url).then(
            (r) => r.status,
            () => 0,
          ),
        );
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const env = await cmd.envSet(d.id, d.orgId, { API_KEY: 'k-1', MODE: 'blue' });
    expect(await cmd.run(d.id, redeployCommand, env)).toMatchObject({ status: 'running', revision: 2 });
    polling = false;
    await poller;
    expect(answers.length).toBeGreaterThan(5);
    expect(answers.filter((s) => s !== 200)).toEqual([]);

    const after = await d.get();
    expect(after).toMatchObject({ status: 'running', url: d.url, envVarNames: ['API_KEY', 'MODE'] });
    const served = await open(d.url, '/env');
    expect(served.text.split('\n')).toEqual(expect.arrayContaining(['API_KEY', 'MODE']));
    expect(served.text).not.toContain('GREETING');
    expect((await open(d.url)).text).not.toBe(oldHost);
    const left = await containers(d.id);
    expect(left).toHaveLength(1);
    expect(left[0]!.Labels[LABELS.revision]).toBe('2');
    const { items } = await cmd.releases(d.id);
    expect(items.map((r) => [r.revision, r.trigger, r.status])).toEqual([
      [2, 'redeploy', 'active'],
      [1, 'deploy', 'superseded'],
    ]);
    expect(items[0]!.imageId).toBe(items[1]!.imageId);
    expect(items[0]!.configHash).not.toBe(items[1]!.configHash);
  });

  it('requests still on their way to the old release when the route switches are answered by it', async () => {
    const d = await deploy();
    const oldHost = (await open(d.url)).text.trim();
    // A request every 100 ms, each answered after 1 s: about ten are with the old release when the route switches.
    const answers: { status: number; host: string }[] = [];
    const inFlight: Promise<void>[] = [];
    let sending = true;
    const sender = (async () => {
      while (sending) {
        inFlight.push(
          fetch(`${d.url}/cgi-bin/slow`).then(
            async (r) => void answers.push({ status: r.status, host: (await r.text()).trim() }),
            () => void answers.push({ status: 0, host: '' }),
          ),
        );
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const env = await cmd.envSet(d.id, d.orgId, { MODE: 'green' });
    expect(await cmd.run(d.id, redeployCommand, env)).toMatchObject({ status: 'running', revision: 2 });
    sending = false;
    await sender;
    await Promise.all(inFlight);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(answers.some((a) => a.host === oldHost)).toBe(true);
    expect(answers.some((a) => a.host !== oldHost)).toBe(true);
  });

  it('a redeploy whose app exits leaves the old release serving, running, with lastFailure saying why', async () => {
    const d = await deploy({ GREETING: 'hello' });
    const oldHost = (await open(d.url)).text;
    const env = await cmd.envSet(d.id, d.orgId, { CRASH: '1' });
    const handle = await cmd.send(d.id, redeployCommand, env);
    await expect(handle.result()).rejects.toBeInstanceOf(WorkflowUpdateFailedError);

    const record = await cmd.record(d.id);
    expect(record).toMatchObject({ status: 'running', envNames: ['GREETING'] });
    expect(record!.lastFailure).toMatchObject({ command: 'redeploy', revision: 2, exitCode: 4 });
    expect(['start', 'ready']).toContain(record!.lastFailure!.phase);
    expect(record!.lastFailure!.lastLines!.join('\n')).toContain('crashing on purpose');
    expect(record!.lastFailure!.hint).toEqual(expect.any(String));
    expect((await open(d.url)).text).toBe(oldHost);
    const left = await containers(d.id);
    expect(left.map((c) => c.Labels[LABELS.revision])).toEqual(['1']);
    expect((await cmd.releases(d.id)).items.map((r) => [r.revision, r.status])).toEqual([
      [2, 'failed'],
      [1, 'active'],
    ]);
  });

  it('rollback to a named revision and to the last healthy one reuses their image and env', async () => {
    const d = await deploy({ FIRST: 'x' });
    const workflow = h.temporal.workflow.getHandle(deploymentWorkflowId(d.id));
    const firstRun = (await workflow.describe()).runId;
    await cmd.run(d.id, redeployCommand, await cmd.envSet(d.id, d.orgId, { SECOND: 'y' }));
    await cmd.run(d.id, redeployCommand, await cmd.envSet(d.id, d.orgId, { THIRD: 'z' }));

    expect(await cmd.run(d.id, rollbackCommand, { revision: 1 })).toMatchObject({ revision: 4 });
    expect((await d.get()).envVarNames).toEqual(['FIRST']);
    expect((await open(d.url, '/env')).text).toContain('FIRST');

    // The last healthy release before the serving one (4) is 3.
    expect(await cmd.run(d.id, rollbackCommand, {})).toMatchObject({ revision: 5 });
    expect((await d.get()).envVarNames).toEqual(['THIRD']);
    const { items } = await cmd.releases(d.id);
    expect(items.slice(0, 2).map((r) => [r.revision, r.trigger, r.rollbackOf])).toEqual([
      [5, 'rollback', 3],
      [4, 'rollback', 1],
    ]);
    expect(new Set(items.map((r) => r.imageId)).size).toBe(1);
    // No release brought new code: each carries on the first's source, the image and what it resolved to.
    const source = { type: 'image', image, imageId: items[0]!.imageId };
    expect(items.map((r) => r.source)).toEqual(items.map(() => source));
    // Four commands: the run continued as new after the third, and the fourth ran on the state it carried.
    expect((await workflow.describe()).runId).not.toBe(firstRun);
    const ended = (await h.temporal.workflow.getHandle(deploymentWorkflowId(d.id), firstRun).fetchHistory()).events;
    expect(ended?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes).toBeTruthy();
  });

  it('scale to 3 spreads requests over 3 containers; back to 1 removes two', async () => {
    const d = await deploy();
    expect(await cmd.run(d.id, scaleCommand, { replicas: 3, maxReplicas: 5 })).toMatchObject({ replicas: 3 });
    expect(await runningContainers(d.id)).toHaveLength(3);
    const seen = new Set<string>();
    for (let i = 0; i < 60 && seen.size < 3; i++) seen.add((await open(d.url)).text);
    expect(seen.size).toBe(3);
    expect((await cmd.record(d.id))!.instances).toHaveLength(3);

    expect(await cmd.run(d.id, scaleCommand, { replicas: 1, maxReplicas: 5 })).toMatchObject({ replicas: 1 });
    expect(await containers(d.id)).toHaveLength(1);
    expect((await open(d.url)).status).toBe(200);
  });

  it("through the api's service: refusals are INVALID_REQUEST with the status and what is allowed; a redeploy seals its values and is followed to its end", async () => {
    const d = await deploy();
    const commands = createDeploymentCommands({
      store: createDeploymentStore(h.db),
      temporal: h.temporal,
      env: createEnvSealer(h.config.SECRETS_KEY),
    });
    const principal = await h.identity.authenticate(d.token);
    await expect(commands.start(principal, d.id)).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      details: { status: 'running', allowed: ['stop', 'redeploy', 'scale', 'rollback', 'destroy'] },
    });
    await expect(commands.scale(principal, d.id, 6)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    const stranger = await h.identity.authenticate((await h.newOrg('pro')).token);
    await expect(commands.stop(stranger, d.id)).rejects.toMatchObject({ code: 'DEPLOYMENT_NOT_FOUND' });

    const secret = `sk-${randomUUID()}`;
    const accepted = await commands.redeploy(principal, d.id, { envVars: { TOKEN: secret } });
    expect(accepted).toMatchObject({
      deployment: { _id: d.id },
      command: { name: 'redeploy', id: expect.any(String) },
    });
    const done = await eventually(async () => {
      const p = await commands.command(principal, d.id, accepted.command.id);
      return p.state === 'running' ? undefined : p;
    }, 'the redeploy to end');
    expect(done).toMatchObject({ state: 'succeeded', outcome: { revision: 2, status: 'running' } });
    expect((await d.get()).envVarNames).toEqual(['TOKEN']);
    const history = historyToJSON(await h.temporal.workflow.getHandle(deploymentWorkflowId(d.id)).fetchHistory());
    expect(carriesSecret(history, secret)).toBe(false);
  });

  it('over HTTP: 202 with a command URL to follow, 400 naming the status for a refused one, 404 for another org', async () => {
    const d = await deploy();
    type Accepted = { data: { command: { url: string }; deployment: { id: string } } };
    const stopped = await d.api.post<Accepted>(`/platform/deployments/${d.id}/stop`);
    expect(stopped.status).toBe(202);
    expect(stopped.body.data.deployment.id).toBe(d.id);
    const commandPath = new URL(stopped.body.data.command.url, h.baseUrl).pathname;
    const ended = await eventually(async () => {
      const r = await d.api.get<{ data: { state: string } }>(commandPath);
      return r.body.data?.state === 'running' ? undefined : r.body.data;
    }, 'the stop to end');
    expect(ended).toMatchObject({ state: 'succeeded', outcome: { status: 'stopped' } });
    expect(await runningContainers(d.id)).toHaveLength(0);
    const unknown = await d.api.get<{ status: string; message: string }>(
      `/platform/deployments/${d.id}/commands/stop:${randomUUID()}`,
    );
    expect(unknown.status).toBe(404);
    expect(unknown.body.message).toMatch(/No command/);

    // Exactly what the README's "Deployment commands and releases" says a refusal answers.
    const refused = await d.api.post<{ status: string; message: string }>(`/platform/deployments/${d.id}/stop`);
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({
      status: 'error',
      message:
        'The deployment is stopped, so it cannot stop; a stopped deployment accepts start, redeploy, scale, rollback, destroy.',
    });
    const tooMany = await d.api.post(`/platform/deployments/${d.id}/scale`, { replicas: 6 });
    expect(tooMany.status).toBe(400);

    const stranger = client(h, (await h.newOrg('pro')).token);
    expect((await stranger.post(`/platform/deployments/${d.id}/start`)).status).toBe(404);
    expect((await d.api.post(`/platform/deployments/${d.id}/start`)).status).toBe(202);
    await eventually(async () => ((await d.get()).status === 'running' ? true : undefined), 'running again');
    expect((await open(d.url)).status).toBe(200);
  });

  it('from failed, only redeploy, rollback and destroy; a redeploy with a working env brings it up', async () => {
    const { token, orgId } = await h.newOrg('pro');
    const api = client(h, token);
    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', {
      image,
      name: 'broken',
      port: 8080,
      envVars: { CRASH: '1' },
    });
    const id = accepted.body.deploymentId;
    expect((await api.waitFor(id, ['running', 'failed'])).status).toBe('failed');
    expect((await cmd.record(id))!.lastFailure).toMatchObject({ command: 'deploy', exitCode: 4 });
    expect(await refusal(h, cmd.send(id, startCommand))).toMatch(
      /is failed, so it cannot start.*accepts redeploy, rollback, destroy/,
    );
    expect(await refusal(h, cmd.send(id, rollbackCommand, {}))).toMatch(/No earlier release/);

    const outcome = await cmd.run(id, redeployCommand, await cmd.envSet(id, orgId, { GREETING: 'fixed' }));
    expect(outcome).toMatchObject({ status: 'running', revision: 2 });
    const record = await cmd.record(id);
    expect(record).toMatchObject({ status: 'running', envNames: ['GREETING'] });
    expect(record!.lastFailure).toBeUndefined();
    expect((await open(record!.url!)).status).toBe(200);
    expect((await containers(id)).map((c) => c.Labels[LABELS.revision])).toEqual(['2']);
  });

  it('from stopped, scale 2 starts two instances; scale 0 stops them again', async () => {
    const d = await deploy();
    await cmd.run(d.id, stopCommand);
    expect(await cmd.run(d.id, scaleCommand, { replicas: 2, maxReplicas: 5 })).toMatchObject({
      status: 'running',
      replicas: 2,
    });
    expect(await runningContainers(d.id)).toHaveLength(2);
    expect((await d.get()).url).toBe(d.url);
    expect(await cmd.run(d.id, scaleCommand, { replicas: 0, maxReplicas: 5 })).toMatchObject({ status: 'stopped' });
    expect(await runningContainers(d.id)).toHaveLength(0);
    expect((await open(d.url)).status).toBe(503);
  });

  it('a deploy in progress takes only a destroy', async () => {
    const { token } = await h.newOrg('pro');
    const api = client(h, token);
    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', {
      image,
      name: 'slow',
      port: 8080,
      envVars: { SLOW: '4' },
    });
    const id = accepted.body.deploymentId;
    await eventually(async () => ((await cmd.record(id))?.status === 'deploying' ? true : undefined), 'deploying');
    expect(await refusal(h, cmd.send(id, stopCommand))).toMatch(/is deploying, so it cannot stop.*accepts destroy/);
    await api.destroyAndWait(id);
  });

  it('shows the command being carried out, then the next ones, while they run', async () => {
    const d = await deploy();
    await cmd.send(d.id, stopCommand);
    await cmd.send(d.id, startCommand);
    const view = await h.temporal.workflow.getHandle(deploymentWorkflowId(d.id)).query(commandsQuery);
    expect([...(view.running ? [view.running.command] : []), ...view.queued.map((q) => q.command)]).toEqual(
      expect.arrayContaining(['start']),
    );
    await eventually(async () => ((await d.get()).status === 'running' ? true : undefined), 'running again');
  });
});

describe('deployment commands: a worker killed mid-command', () => {
  let h: Harness;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    h = await startHarness('commands-crash', { RATE_LIMIT_COMPAT_READS_PER_MIN: '100000' }, { worker: false });
  });
  afterAll(async () => {
    for (const w of workers) {
      w.kill('SIGTERM');
      await exited(w);
    }
    await h?.stop();
  });

  it('finishes the redeploy on the next worker (SIGKILL while the new release starts)', async () => {
    const image = await buildFixtureImage(h.docker, 'env-hello');
    const cmd = commander(h);
    const { token, orgId } = await h.newOrg('pro');
    const api = client(h, token);
    workers.push(spawnWorker(h).child);
    const accepted = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name: 'durable', port: 8080 });
    const id = accepted.body.deploymentId;
    await api.waitFor(id, ['running'], 90_000);

    // The new release listens only after 8 s: the worker is killed while it waits for it.
    const update = await cmd.send(id, redeployCommand, await cmd.envSet(id, orgId, { SLOW: '8', V: '2' }));
    await eventually(async () => ((await containers()).length === 2 ? true : undefined), 'the new release to start');
    const first = workers[0]!;
    first.kill('SIGKILL');
    await exited(first);
    expect(first.signalCode).toBe('SIGKILL');

    workers.push(spawnWorker(h).child);
    expect(await update.result()).toMatchObject({ status: 'running', revision: 2 });
    const left = await containers();
    expect(left.map((c) => c.Labels[LABELS.revision])).toEqual(['2']);
    expect((await cmd.record(id))!.envNames).toEqual(['SLOW', 'V']);
    await api.destroyAndWait(id);

    function containers() {
      return h.docker.listContainers({ all: true, filters: { label: [`${LABELS.deploymentId}=${id}`] } });
    }
  });
});
