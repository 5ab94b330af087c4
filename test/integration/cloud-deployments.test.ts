import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { cloudServiceName } from '@activities/providers/cloud';
import { createContainerAppsAdapter } from '@activities/providers/cloud-container-apps';
import type { ContainerAppsCredentials } from '@shared/cloud/credentials';
import { deploymentWorkflowId } from '@shared/contracts/deployment';

import { client } from '../helpers/client';
import { loadScenario, type Replay, selfSignedTls, startReplay } from '../helpers/cloud-replay';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { carriesSecret, historyToJSON } from '../helpers/history-json';
import { startRegistry } from '../helpers/registry';
import { archiveForm, makeZip } from '../helpers/zip';

/**
 * A deployment on a cloud provider through the whole stack: credentials set with PUT (tried by the real adapter in an
 * activity), the cloud shown available, then deploy, stop, start and destroy through REST, carried out by the
 * deployment workflow's cloud path (Temporal, FerretDB, Redis real) with the real Container Apps adapter and Azure's
 * real SDKs talking to exchanges replayed from Azure's REST reference (test/fixtures/cloud/container-apps). The
 * replay is strict: every call the workflow makes must be the next one the cloud would have been asked.
 */
const tls = selfSignedTls();
const vars = {
  tenant: '72f988bf-86f1-41af-91ab-2d7cd011db47',
  client: '1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9',
  sub: '34adfa4f-cedf-4dc0-ba29-b6d1a69ab345',
  rg: 'slipway-apps',
  env: 'slipway-env',
  workspace: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
};
const credentials = (clientSecret: string): ContainerAppsCredentials => ({
  tenantId: vars.tenant,
  clientId: vars.client,
  clientSecret,
  subscriptionId: vars.sub,
  resourceGroup: vars.rg,
  environmentId: `/subscriptions/${vars.sub}/resourceGroups/${vars.rg}/providers/Microsoft.App/managedEnvironments/${vars.env}`,
  logAnalyticsWorkspaceId: vars.workspace,
  regions: ['westeurope'],
});

interface Provider {
  id: string;
  available: boolean;
  reason?: string;
  regions: string[];
}

describe('a deployment on a cloud provider, through the api and the workflow', () => {
  let h: Harness;
  let replay: Replay;

  beforeAll(async () => {
    replay = await startReplay(
      loadScenario(
        ...[
          'signin-refused',
          'signin',
          'verify',
          // Before a deploy the adapter reads the app, to deactivate old revisions; the first finds none.
          'app-absent',
          'deploy-r1',
          'status-serving-r1',
          'stop',
          'start',
          'status-serving-r1',
          // GET …/health asks the cloud.
          'status-serving-r1',
          'logs-token',
          'logs',
          // r1 serves and is the only revision: nothing to deactivate.
          'retire-before-r2',
          'deploy-r2',
          'status-serving-r2',
          'serve-r1',
          'status-rolled-back-r1',
          'destroy',
          // The source deploy: the credentials again (the client and its token are cached), then its app.
          'verify',
          'app-absent',
          'deploy-r1',
          'status-serving-r1',
          'destroy',
        ].map((f) => `container-apps/${f}.json`),
      ),
      { tls, vars },
    );
    const adapter = createContainerAppsAdapter(
      { CLOUD_B_ARM_ENDPOINT: replay.origin, CLOUD_B_LOGS_ENDPOINT: replay.origin },
      {
        authorityHost: replay.origin,
        clientOptions: {
          tlsOptions: { ca: tls.cert },
          retryOptions: { maxRetries: 1, retryDelayInMs: 1, maxRetryDelayInMs: 5 },
        },
        pollIntervalMs: 1,
      },
    );
    h = await startHarness(
      'cloud-deployments',
      { RATE_LIMIT_PLATFORM_PER_15MIN: '100000', RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000' },
      { cloudAdapters: { cloud_b_container_apps: adapter } },
    );
  });
  afterAll(async () => {
    await h?.stop();
    await replay?.stop();
  });

  it('is unavailable until credentials that work are set, then deploys, stops, starts, reads logs, redeploys, rolls back and destroys in the cloud', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);
    const providers = async () =>
      (await api.get<{ providers: Provider[] }>('/compat/providers')).body.providers.find(
        (p) => p.id === 'cloud_b_container_apps',
      )!;

    expect(await providers()).toMatchObject({ available: false, regions: [] });
    expect((await providers()).reason).toContain('PUT /platform/providers/cloud_b_container_apps/credentials');
    const refusedDeploy = await api.post<{ code: string; error: string }>('/compat/deploy', {
      name: 'web',
      image: 'nginx:1.27',
      port: 8080,
      provider: 'cloud_b_container_apps',
    });
    expect([refusedDeploy.status, refusedDeploy.body.code]).toEqual([403, 'PROVIDER_NOT_ALLOWED']);
    expect(refusedDeploy.body.error).toContain('no credentials for it');

    // Credentials the cloud refuses are not saved, and say why.
    const refused = await api.call<{ message: string }>(
      'PUT',
      '/platform/providers/cloud_b_container_apps/credentials',
      credentials('wrong-secret'),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/^cloud_b_container_apps refused the credentials, so nothing was saved/);
    expect(refused.body.message).toContain('AADSTS7000215');
    expect(refused.body.message).not.toContain('wrong-secret');
    expect((await api.get('/platform/providers/cloud_b_container_apps/credentials')).status).toBe(404);

    // A body of another cloud's shape is refused before anything is tried.
    const wrongShape = await api.call('PUT', '/platform/providers/cloud_b_container_apps/credentials', {
      accessKeyId: 'AKIA',
    });
    expect(wrongShape.status).toBe(400);

    const put = await api.call<{ data: Record<string, unknown> }>(
      'PUT',
      '/platform/providers/cloud_b_container_apps/credentials',
      credentials('Qx8~client-secret-value'),
    );
    expect(put.status).toBe(200);
    expect(put.body.data).toMatchObject({
      provider: 'cloud_b_container_apps',
      identity: vars.client,
      regions: ['westeurope'],
    });
    expect(JSON.stringify(put.body)).not.toContain('Qx8~client-secret-value');
    expect(await providers()).toMatchObject({ available: true, regions: ['westeurope'] });

    // Another organisation sees none of it.
    const other = client(h, (await h.newOrg('pro')).token);
    expect((await other.get('/platform/providers/cloud_b_container_apps/credentials')).status).toBe(404);

    const created = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
      name: 'web',
      image: 'nginx:1.27',
      port: 8080,
      provider: 'cloud_b_container_apps',
      replicas: 2,
      envVars: { GREETING: 'hello' },
    });
    expect(created.status).toBe(202);
    const id = created.body.data.deployment.id;
    const running = await api.waitFor(id, ['running', 'failed'], 120_000);
    expect(running).toMatchObject({ status: 'running', provider: 'cloud_b_container_apps' });
    expect(String(running.url)).toMatch(/^https:\/\/.+\.azurecontainerapps\.io/);
    const put1 = replay.requestsOf('put-app-r1')[0]!;
    expect(put1.body).toMatchObject({
      tags: { 'slipway-managed': 'true', 'slipway-deployment': id, 'slipway-org': org.orgId },
    });
    expect(JSON.stringify(put1.body)).toContain('GREETING');

    expect((await api.post(`/platform/deployments/${id}/stop`)).status).toBeLessThan(300);
    await api.waitFor(id, ['stopped']);
    expect((await api.post(`/platform/deployments/${id}/start`)).status).toBeLessThan(300);
    await api.waitFor(id, ['running']);

    const health = await api.get<{ data: { overall: string; instances: unknown[] } }>(
      `/platform/deployments/${id}/health`,
    );
    expect([health.status, health.body.data.overall]).toEqual([200, 'healthy']);

    // The app's output comes from the cloud's log service, read by the worker with the organisation's credentials.
    const logs = await api.get<{ data: { lines: { stream: string; message: string; instance?: string }[] } }>(
      `/platform/deployments/${id}/logs?stream=app&limit=50`,
    );
    expect(logs.status).toBe(200);
    expect(logs.body.data.lines.map((l) => [l.stream, l.message])).toEqual([
      ['stdout', 'listening on 8080'],
      ['stdout', 'listening on 8080'],
      ['stderr', 'warning: cache cold'],
    ]);

    // A new environment is a new revision; a rollback sends the traffic back to the kept one.
    const redeploy = await api.post(`/platform/deployments/${id}/redeploy`, { envVars: { GREETING: 'bonjour' } });
    expect(redeploy.status).toBeLessThan(300);
    await eventually(async () => {
      const d = await api.get<{ data: { status: string; revision: number } }>(`/platform/deployments/${id}`);
      return d.body.data.status === 'running' && d.body.data.revision === 2 ? true : undefined;
    }, 'release 2 serving');
    expect(JSON.stringify(replay.requestsOf('put-app-r2')[0]!.body)).toContain('bonjour');
    const rollback = await api.post(`/platform/deployments/${id}/rollback`, {});
    expect(rollback.status).toBeLessThan(300);
    await eventually(async () => {
      const d = await api.get<{ data: { status: string; revision: number } }>(`/platform/deployments/${id}`);
      return d.body.data.status === 'running' && d.body.data.revision === 3 ? true : undefined;
    }, 'the rollback serving');
    expect(replay.requestsOf('patch-traffic')[0]!.body).toMatchObject({
      properties: {
        configuration: { ingress: { traffic: [{ revisionName: expect.stringMatching(/--r1$/), weight: 100 }] } },
      },
    });
    // r1 was activated before it took the traffic, and r2, left without traffic, no longer runs.
    const at = (name: string) => replay.received.findIndex((r) => r.exchange === name);
    expect(at('activate-r1')).toBeGreaterThan(-1);
    expect(at('activate-r1')).toBeLessThan(at('patch-traffic'));
    expect(replay.requestsOf('deactivate-r2')[0]!.path).toMatch(/\/revisions\/[^/]+--r2\/deactivate$/);

    // What a cloud cannot take is refused before anything starts.
    const withVolume = await api.post<{ message: string }>(`/platform/deployments/${id}/volumes`, {
      volumeId: randomUUID(),
      mountPath: '/data',
    });
    expect([withVolume.status, withVolume.body.message]).toEqual([400, expect.stringContaining('cannot mount one')]);
    const withDatabase = await api.post<{ message: string }>(`/platform/deployments/${id}/databases`, {
      engine: 'postgresql',
      sizeGb: 1,
    });
    expect([withDatabase.status, withDatabase.body.message]).toEqual([400, expect.stringContaining('cannot reach')]);
    const upload = await api.call<{ uploadId: string }>(
      'POST',
      '/compat/uploads/zip',
      archiveForm(await makeZip({ 'index.html': '<h1>built here</h1>' })),
    );
    const noRegistry = await api.post<{ message: string }>('/platform/deployments', {
      name: 'site',
      uploadId: upload.body.uploadId,
      provider: 'cloud_b_container_apps',
    });
    expect([noRegistry.status, noRegistry.body.message]).toEqual([400, expect.stringContaining('name none')]);

    // Credentials in use cannot be removed from under the deployment.
    expect((await api.del('/platform/providers/cloud_b_container_apps/credentials')).status).toBe(409);

    expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
    await eventually(
      async () => (replay.requestsOf('delete-app-done').length === 1 ? true : undefined),
      'the app to be deleted',
    );
    expect(replay.mismatches).toEqual([]);
    await eventually(
      async () =>
        (await api.del('/platform/providers/cloud_b_container_apps/credentials')).status === 204 ? true : undefined,
      'the credentials to be removable once nothing runs on the cloud',
    );
    expect(await providers()).toMatchObject({ available: false });

    // With SLIPWAY_RECORD_HISTORIES=1, this deployment's history becomes a fixture of the replay test
    // (test/fixtures/histories/README.md): the cloud path's commands, as deployments on a cloud run them today.
    if (process.env.SLIPWAY_RECORD_HISTORIES === '1') {
      const handle = h.temporal.workflow.getHandle(deploymentWorkflowId(id));
      await handle.result();
      const json = historyToJSON(await handle.fetchHistory());
      if (carriesSecret(json)) throw new Error('the history carries an env value');
      await fs.writeFile(
        path.join(__dirname, '..', 'fixtures', 'histories', 'deployment-cloud-commands-destroyed.json'),
        // prettier's formatting needs a dynamic import jest refuses: `npx prettier --write` the file before committing.
        json,
      );
    }
  });

  it('builds a source here, pushes it to the registry the credentials name, and the cloud runs it by digest', async () => {
    const registry = await startRegistry();
    try {
      // A new deployment: its app's name is captured again from the first request naming it.
      delete replay.vars.app;
      const org = await h.newOrg('pro');
      const api = client(h, org.token);
      const put = await api.call('PUT', '/platform/providers/cloud_b_container_apps/credentials', {
        ...credentials('Qx8~client-secret-value'),
        registry: { repository: `${registry.host}/acme` },
      });
      expect(put.status).toBe(200);
      const upload = await api.call<{ uploadId: string }>(
        'POST',
        '/compat/uploads/zip',
        archiveForm(await makeZip({ 'index.html': '<h1>built here</h1>' })),
      );
      const created = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
        name: 'site',
        uploadId: upload.body.uploadId,
        provider: 'cloud_b_container_apps',
      });
      expect(created.status).toBe(202);
      const id = created.body.data.deployment.id;
      const running = await api.waitFor(id, ['running', 'failed'], 300_000);
      expect(running).toMatchObject({ status: 'running' });
      // The cloud was given the pushed image by digest, and the registry holds it.
      const image = (
        replay.requestsOf('put-app-r1').at(-1)!.body as {
          properties: { template: { containers: { image: string }[] } };
        }
      ).properties.template.containers[0]!.image;
      const repo = `${registry.host}/acme/${cloudServiceName(id, 63)}`;
      expect(image).toMatch(new RegExp(`^${repo.replace(/[.]/g, '\\.')}@sha256:[0-9a-f]{64}$`));
      const manifest = await fetch(`http://${registry.host}/v2/acme/${cloudServiceName(id, 63)}/manifests/r1`, {
        headers: {
          accept: 'application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json',
        },
      });
      expect(manifest.status).toBe(200);
      expect(manifest.headers.get('docker-content-digest')).toBe(image.split('@')[1]);

      expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
      await eventually(async () => (replay.pending().length === 0 ? true : undefined), 'the app to be deleted');
      expect(replay.mismatches).toEqual([]);
      await eventually(
        async () =>
          (await api.del('/platform/providers/cloud_b_container_apps/credentials')).status === 204 ? true : undefined,
        'the credentials to be removable once nothing runs on the cloud',
      );
    } finally {
      await registry.stop();
    }
  });
});
