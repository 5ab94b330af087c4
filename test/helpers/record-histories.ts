/**
 * Records workflow histories from this checkout's workflow code for the replay test (test/unit/replay.test.ts).
 * Starts the real stack as the tests do (global setup, the harness's api and worker), drives deployments over HTTP,
 * and writes each workflow's history as Temporal JSON into test/fixtures/histories/<scenario>.json.
 *
 *   node --import tsx test/helpers/record-histories.ts
 *
 * Re-record only on purpose: the fixtures stand for deployments already running an older version of the code.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';

import type { WorkflowHandle } from '@temporalio/client';
import { format } from 'prettier';

import { deploymentWorkflowId } from '@shared/contracts/deployment';
import { webhookWorkflowId } from '@shared/contracts/webhook-delivery';

import { client } from './client';
import globalSetup from './global-setup';
import globalTeardown from './global-teardown';
import { eventually, type Harness, startHarness } from './harness';
import { carriesSecret, historyToJSON, SECRET_VALUE } from './history-json';
import { buildFixtureImage } from './images';
import { startReceiver } from './receiver';
import { archiveForm, zipDirectory } from './zip';

const ROOT = path.resolve(__dirname, '..', '..');
const OUT = path.join(ROOT, 'test', 'fixtures', 'histories');
const SOURCES = path.join(ROOT, 'test', 'fixtures', 'sources');

type Api = ReturnType<typeof client>;

interface Event {
  status: string;
  message: string;
}

async function save(h: Harness, scenario: string, workflowId: string, open = false): Promise<void> {
  const handle: WorkflowHandle = h.temporal.workflow.getHandle(workflowId);
  if (!open) await handle.result().catch(() => undefined);
  const description = await handle.describe();
  const json = historyToJSON(await handle.fetchHistory());
  if (carriesSecret(json)) throw new Error(`${scenario}: the history carries an env value`);
  // Formatted as the repository's prettier formats JSON, so `prettier --check .` passes on fresh recordings.
  await fs.writeFile(path.join(OUT, `${scenario}.json`), await format(json, { parser: 'json' }));
  console.log(`${scenario}: ${description.type} ${description.status.name}, ${json.length} bytes`);
}

async function deployImage(api: Api, image: string, name: string, envVars: Record<string, string> = {}) {
  const r = await api.post<{ deploymentId: string }>('/compat/deploy', { image, name, port: 8080, envVars });
  if (r.status !== 202) throw new Error(`deploy ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.deploymentId;
}

async function deployZip(api: Api, dir: string, name: string) {
  const up = await api.call<{ uploadId: string }>('POST', '/compat/uploads/zip', archiveForm(await zipDirectory(dir)));
  if (up.status !== 201) throw new Error(`upload ${name}: ${up.status} ${JSON.stringify(up.body)}`);
  const r = await api.post<{ deploymentId: string }>('/compat/deploy/source', {
    uploadId: up.body.uploadId,
    name,
    port: 8080,
  });
  if (r.status !== 202) throw new Error(`deploy ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.deploymentId;
}

const whenEvent = (api: Api, id: string, match: (e: Event) => boolean, what: string) =>
  eventually(
    async () => {
      const d = await api.get<{ events?: Event[] }>(`/compat/deployments/${id}`);
      return d.body.events?.some(match) ? true : undefined;
    },
    what,
    300_000,
  );

async function recordDeployments(h: Harness, api: Api) {
  const hello = await buildFixtureImage(h.docker, 'hello');
  const slow = await buildFixtureImage(h.docker, 'slow-hello');
  const crash = await buildFixtureImage(h.docker, 'crash');

  // (a) An image deploy with env vars that reaches running, then is destroyed.
  const a = await deployImage(api, hello, 'rec-image', { API_KEY: SECRET_VALUE, MODE: 'x' });
  await api.waitFor(a, ['running'], 120_000);
  await api.destroyAndWait(a);
  await save(h, 'deployment-image-running-destroyed', deploymentWorkflowId(a));

  // (b) A destroy while the app is still starting (waitReady cancelled).
  const b = await deployImage(api, slow, 'rec-destroy-ready');
  await whenEvent(api, b, (e) => e.message.includes('waiting for port'), 'the container to start');
  await api.destroyAndWait(b);
  await save(h, 'deployment-destroyed-while-starting', deploymentWorkflowId(b));

  // (c) An app that exits: failed, then destroyed.
  const c = await deployImage(api, crash, 'rec-crash');
  await api.waitFor(c, ['failed'], 120_000);
  await api.destroyAndWait(c);
  await save(h, 'deployment-failed-destroyed', deploymentWorkflowId(c));

  // (d) A source (zip) deploy of a static site to running, then destroyed.
  const d = await deployZip(api, path.join(SOURCES, 'static-site'), 'rec-zip');
  await api.waitFor(d, ['running'], 300_000);
  await api.destroyAndWait(d);
  await save(h, 'deployment-zip-running-destroyed', deploymentWorkflowId(d));

  // (b') A destroy during a source build (the builder activity cancelled).
  const e = await deployZip(api, path.join(SOURCES, 'slow-build'), 'rec-destroy-build');
  await whenEvent(api, e, (ev) => ev.status === 'building', 'the build to start');
  await new Promise((r) => setTimeout(r, 3000)); // into the build itself, past the record write
  await api.destroyAndWait(e);
  await save(h, 'deployment-destroyed-while-building', deploymentWorkflowId(e));

  // (e) Still open: running and waiting for its destroy when recorded; a failed one waiting likewise.
  const f = await deployImage(api, hello, 'rec-open');
  await api.waitFor(f, ['running'], 120_000);
  const g = await deployImage(api, crash, 'rec-open-failed');
  await api.waitFor(g, ['failed'], 120_000);
  await eventually(
    async () =>
      (await h.temporal.workflow.getHandle(deploymentWorkflowId(g)).fetchHistory()).events?.at(-1)
        ?.workflowTaskCompletedEventAttributes
        ? true
        : undefined,
    'the failed workflow to settle',
  );
  await save(h, 'deployment-open-running', deploymentWorkflowId(f), true);
  await save(h, 'deployment-open-failed', deploymentWorkflowId(g), true);
  await api.destroyAndWait(f);
  await api.destroyAndWait(g);
}

/** Sends a platform command to deployment `id` and waits for its end; a command that fails is what it is. */
async function runCommand(h: Harness, api: Api, id: string, command: string, body: Record<string, unknown> = {}) {
  const r = await api.post<{ data: { command: { url: string } } }>(`/platform/deployments/${id}/${command}`, body);
  if (r.status !== 202) throw new Error(`${command} ${id}: ${r.status} ${JSON.stringify(r.body)}`);
  const path = new URL(r.body.data.command.url, h.baseUrl).pathname;
  await eventually(
    async () => ((await api.get<{ data: { state: string } }>(path)).body.data.state === 'running' ? undefined : true),
    `the ${command} to end`,
    120_000,
  );
}

async function recordCommands(h: Harness, api: Api) {
  const envHello = await buildFixtureImage(h.docker, 'env-hello');
  // (f) The commands of a running deployment: redeploys with a new environment (one whose app exits, so the old
  // release keeps serving), a rollback, stop, start and scale, then destroyed.
  const id = await deployImage(api, envHello, 'rec-commands', { GREETING: 'hello' });
  await api.waitFor(id, ['running'], 120_000);
  await runCommand(h, api, id, 'redeploy', { envVars: { API_KEY: SECRET_VALUE, MODE: 'blue' } });
  await runCommand(h, api, id, 'redeploy', { envVars: { CRASH: '1' } });
  await runCommand(h, api, id, 'rollback', { revision: 1 });
  await runCommand(h, api, id, 'stop');
  await runCommand(h, api, id, 'start');
  await runCommand(h, api, id, 'scale', { replicas: 2 });
  await api.destroyAndWait(id);
  await save(h, 'deployment-commands-destroyed', deploymentWorkflowId(id));
}

async function recordSales(h: Harness, api: Api) {
  // Refused once, then accepted: the history holds an attempt, a retry timer and a delivered attempt.
  const receiver = await startReceiver((n) => ({ status: n === 1 ? 503 : 200 }));
  try {
    await api.call('PUT', '/platform/sales/webhook', { url: receiver.url });
    const product = await api.post<{ data: { id: string } }>('/platform/products', {
      name: 'Course',
      billingType: 'ONE_TIME',
      price: 49,
      currency: 'USD',
    });
    const sale = await api.post<{ data: { eventId: string } }>('/platform/sales', {
      productId: product.body.data.id,
      buyer: { email: 'buyer@example.com', name: 'Buyer' },
      amount: 1,
      currency: 'EUR',
    });
    const eventId = sale.body.data.eventId;
    await save(h, 'webhook-delivery-retried-delivered', webhookWorkflowId(eventId));
    // A manual resend, started as the api starts it (its own workflow ID per attempt).
    const resend = await h.temporal.workflow.start('webhookResendWorkflow', {
      taskQueue: h.taskQueue,
      workflowId: `record-resend-${eventId}`,
      args: [{ eventId, trigger: 'manual' }],
    });
    await save(h, 'webhook-resend', resend.workflowId);
  } finally {
    await receiver.stop();
  }
  const outbox = await h.temporal.workflow.start('webhookOutboxWorkflow', {
    taskQueue: h.taskQueue,
    workflowId: 'record-webhook-outbox',
    args: [{ retryDelaysS: [1, 1, 1], finalAttemptAfterS: 10 }],
  });
  await save(h, 'webhook-outbox-sweep', outbox.workflowId);
}

async function recordSchedules(h: Harness) {
  for (const [type, scenario] of [
    ['reconcileWorkflow', 'reconcile'],
    ['expireUploadsWorkflow', 'upload-expiry'],
  ] as const) {
    const w = await h.temporal.workflow.start(type, { taskQueue: h.taskQueue, workflowId: `record-${scenario}` });
    await save(h, scenario, w.workflowId);
  }
}

async function main() {
  await globalSetup();
  const h = await startHarness('record', {
    ALLOW_PRIVATE_WEBHOOK_TARGETS: 'true',
    WEBHOOK_RETRY_DELAYS_S: '1,1,1',
    WEBHOOK_FINAL_ATTEMPT_AFTER_S: '10',
    RATE_LIMIT_COMPAT_WRITES_PER_HOUR: '10000',
    RATE_LIMIT_COMPAT_READS_PER_MIN: '100000',
    RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
  });
  try {
    await fs.mkdir(OUT, { recursive: true });
    const api = client(h, (await h.newOrg('pro')).token);
    await recordDeployments(h, api);
    await recordCommands(h, api);
    await recordSales(h, api);
    await recordSchedules(h);
    // Run from an export of a commit (no .git), RECORD_COMMIT names it.
    const commit =
      process.env.RECORD_COMMIT ?? execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim();
    console.log(`recorded from ${commit}`);
  } finally {
    await h.stop();
    await globalTeardown();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
