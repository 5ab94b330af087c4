import { ApplicationFailure } from '@temporalio/common';

import { CLOUD_FAILURES, cloudFailureDetails, type CloudReleaseSpec } from '@activities/providers/cloud';
import { createContainerAppsAdapter } from '@activities/providers/cloud-container-apps';
import { azureFailure } from '@activities/providers/cloud-container-apps-shapes';
import type { ContainerAppsCredentials } from '@shared/cloud/credentials';

import { loadScenario, type Replay, selfSignedTls, startReplay } from '../helpers/cloud-replay';

/**
 * The Container Apps adapter with Azure's real SDKs (ARM, Entra ID sign-in, Log Analytics) against exchanges written
 * from Azure's REST reference and its official examples (test/fixtures/cloud/container-apps), served over HTTPS since
 * the SDK sends a bearer token over nothing else.
 */
const tls = selfSignedTls();
const deploymentId = '0f3c9a52-7d41-4e8b-9a6c-2b1d5e8f7a90';
const app = 's0f3c9a527d414e8b9a6c2b1d5e8f7a9';
const vars = {
  tenant: '72f988bf-86f1-41af-91ab-2d7cd011db47',
  client: '1b2c3d4e-5f60-4718-8293-a4b5c6d7e8f9',
  sub: '34adfa4f-cedf-4dc0-ba29-b6d1a69ab345',
  rg: 'slipway-apps',
  env: 'slipway-env',
  app,
  workspace: 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d',
  deploymentId,
  otherDeploymentId: '0a1b2c3d-0000-4000-8000-00000000000a',
  orgId: 'org_7c1e',
};
const creds: ContainerAppsCredentials = {
  tenantId: vars.tenant,
  clientId: vars.client,
  clientSecret: 'Qx8~client-secret-value',
  subscriptionId: vars.sub,
  resourceGroup: vars.rg,
  environmentId: `/subscriptions/${vars.sub}/resourceGroups/${vars.rg}/providers/Microsoft.App/managedEnvironments/${vars.env}`,
  logAnalyticsWorkspaceId: vars.workspace,
  regions: ['westeurope'],
  registry: { repository: 'registry.example.com/acme' },
};
const release = (revision: number, over: Partial<CloudReleaseSpec> = {}): CloudReleaseSpec => ({
  deploymentId,
  orgId: vars.orgId,
  revision,
  image: 'registry.example.com/acme/web:1',
  port: 8080,
  env: { GREETING: 'hello' },
  replicas: 2,
  limits: { memoryMb: 700, cpus: 0.3 },
  region: 'westeurope',
  ...over,
});
const target = { deploymentId, region: 'westeurope' };

let replay: Replay;
async function scenario(...files: string[]) {
  replay = await startReplay(loadScenario(...files.map((f) => `container-apps/${f}.json`)), { tls, vars });
  return createContainerAppsAdapter(
    { CLOUD_B_ARM_ENDPOINT: replay.origin, CLOUD_B_LOGS_ENDPOINT: replay.origin },
    {
      authorityHost: replay.origin,
      clientOptions: {
        tlsOptions: { ca: tls.cert },
        retryOptions: { maxRetries: 2, retryDelayInMs: 1, maxRetryDelayInMs: 5 },
      },
      pollIntervalMs: 1,
    },
  );
}
afterEach(async () => {
  await replay.stop();
});
const expectAllServed = () => {
  expect(replay.mismatches).toEqual([]);
  expect(replay.pending()).toEqual([]);
};
const failureOf = async (p: Promise<unknown>) => {
  const err = (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as ApplicationFailure | Error | undefined;
  expect(err).toBeDefined();
  return err!;
};
const revisionsPath = `/subscriptions/${vars.sub}/resourceGroups/${vars.rg}/providers/Microsoft.App/containerApps/${app}/revisions`;
/** The paths of the activations and deactivations sent so far. */
const revisionPosts = () =>
  replay.received.filter((r) => r.method === 'POST' && r.path.startsWith(revisionsPath)).map((r) => r.path);
/** For each named exchange after the first: was it first served after the one before it? */
const order = (...names: string[]) => {
  const at = names.map((n) => replay.received.findIndex((r) => r.exchange === n));
  expect(at).not.toContain(-1);
  return at.slice(1).map((i, k) => i > at[k]!);
};
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body as the SDK sent it, asserted on by shape
const bodyOf = (name: string) => replay.requestsOf(name)[0]!.body as Record<string, any>;

describe('Container Apps adapter against the replayed Azure APIs', () => {
  it('verifies credentials with a read-only listing and the environment, signing in with the client secret', async () => {
    const adapter = await scenario('signin', 'verify');
    await adapter.verify(creds);
    const form = new URLSearchParams(replay.requestsOf('token')[0]!.body as string);
    expect(form.get('grant_type')).toBe('client_credentials');
    expect(form.get('client_id')).toBe(vars.client);
    expect(form.get('scope')).toBe(`${replay.origin}/.default`);
    expect(replay.requestsOf('list-apps')[0]!.headers.authorization).toMatch(/^Bearer /);
    expectAllServed();
  });

  it('refuses credentials Entra ID refuses, naming the reason and not the secret', async () => {
    const adapter = await scenario('signin-refused');
    const err = await failureOf(adapter.verify(creds));
    expect((err as ApplicationFailure).type).toBe(CLOUD_FAILURES.credentialsRefused);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    const details = cloudFailureDetails(err)!;
    expect(details.message).toContain('AADSTS7000215: Invalid client secret provided.');
    expect(details.message).not.toContain('Trace ID');
    expect(details.hint).toMatch(/client secret/);
    expect(JSON.stringify(details)).not.toContain(creds.clientSecret);
    expectAllServed();
  });

  it('refuses credentials whose principal lacks the role (403 AuthorizationFailed)', async () => {
    const adapter = await scenario('signin', 'verify-forbidden');
    const err = await failureOf(adapter.verify(creds));
    expect((err as ApplicationFailure).type).toBe(CLOUD_FAILURES.credentialsRefused);
    expect(cloudFailureDetails(err)!.message).toContain('AuthorizationFailed');
    expect(cloudFailureDetails(err)!.hint).toContain(`resource group ${vars.rg}`);
    expectAllServed();
  });

  it('deploys, serves, rolls back, stops and starts a release, and reads its logs', async () => {
    const adapter = await scenario(
      'signin',
      'app-absent',
      'deploy-r1',
      'status-serving-r1',
      'retire-before-r2',
      'deploy-r2',
      'serve-r1',
      'stop',
      'start',
      'logs-token',
      'logs',
    );

    expect(await adapter.deployRevision(creds, release(1))).toEqual({ revision: 1, name: `${app}--r1` });
    const put = bodyOf('put-app-r1');
    expect(put).toMatchObject({
      location: 'westeurope',
      tags: { 'slipway-managed': 'true', 'slipway-deployment': deploymentId, 'slipway-org': vars.orgId },
      properties: {
        environmentId: creds.environmentId,
        configuration: {
          activeRevisionsMode: 'Multiple',
          ingress: { external: true, targetPort: 8080, traffic: [{ latestRevision: true, weight: 100 }] },
          registries: [
            { server: 'registry.example.com', username: vars.client, passwordSecretRef: 'registry-password' },
          ],
        },
        template: {
          revisionSuffix: 'r1',
          containers: [
            {
              name: 'app',
              image: 'registry.example.com/acme/web:1',
              env: [{ name: 'GREETING', value: 'hello' }],
              // 0.3 vCPU and 700 MB round up to the nearest pair Container Apps sells.
              resources: { cpu: 0.5, memory: '1Gi' },
            },
          ],
          scale: { minReplicas: 2, maxReplicas: 2 },
        },
      },
    });

    expect(await adapter.status(creds, target)).toMatchObject({
      phase: 'serving',
      serving: { revision: 1, name: `${app}--r1` },
      desiredReplicas: 2,
      runningReplicas: 2,
      url: `https://${app}.kindhill-5e1d2f3a.westeurope.azurecontainerapps.io`,
    });

    expect(await adapter.deployRevision(creds, release(2))).toEqual({ revision: 2, name: `${app}--r2` });
    expect(bodyOf('put-app-r2').properties.template.revisionSuffix).toBe('r2');
    // r1 serves until r2 does, and takes the traffic back if r2 never does: it keeps running.
    expect(revisionPosts()).toEqual([]);

    await adapter.serveRevision(creds, { ...target, revision: { revision: 1, name: `${app}--r1` }, replicas: 2 });
    expect(bodyOf('patch-traffic')).toEqual({
      location: 'West Europe',
      properties: { configuration: { ingress: { traffic: [{ revisionName: `${app}--r1`, weight: 100 }] } } },
    });
    // The rollback leaves r2, now without traffic, running nothing.
    expect(order('activate-r1', 'patch-traffic', 'deactivate-r2')).toEqual([true, true]);

    await adapter.setReplicas(creds, { ...target, replicas: 0 });
    expect(replay.requestsOf('post-stop')).toHaveLength(1);
    await adapter.setReplicas(creds, { ...target, replicas: 2 });
    expect(replay.requestsOf('post-start')).toHaveLength(1);

    const lines = await adapter.logs(creds, target, { tail: 50, since: '2025-09-01T10:00:00Z' });
    expect(lines).toEqual([
      {
        timestamp: '2025-09-01T10:02:01.123Z',
        stream: 'stdout',
        message: 'listening on 8080',
        instance: `${app}--r1-7d9f8c6b5-x2k4p`,
      },
      {
        timestamp: '2025-09-01T10:02:02.000Z',
        stream: 'stdout',
        message: 'listening on 8080',
        instance: `${app}--r1-7d9f8c6b5-q8m3z`,
      },
      {
        timestamp: '2025-09-01T10:02:03.456Z',
        stream: 'stderr',
        message: 'warning: cache cold',
        instance: `${app}--r1-7d9f8c6b5-x2k4p`,
      },
    ]);
    const query = bodyOf('query-logs') as { query: string; timespan: string };
    expect(query.query).toContain('ContainerAppConsoleLogs_CL');
    expect(query.query).toContain(`where ContainerAppName_s == '${app}'`);
    expect(query.query).toContain('where TimeGenerated >= datetime(2025-09-01T10:00:00.000Z)');
    expect(query.query).toContain('top 50 by TimeGenerated desc');
    expect(query.timespan).toMatch(/^2025-09-01T10:00:00.000Z\//);
    expect(new URLSearchParams(replay.requestsOf('logs-token')[0]!.body as string).get('scope')).toBe(
      'https://api.loganalytics.io/.default',
    );
    expectAllServed();
  });

  it('deactivates the revision before the serving one on the next deploy, and activates it again for a rollback before its traffic moves', async () => {
    const adapter = await scenario('signin', 'retire-before-r3', 'deploy-r3', 'serve-r1-inactive');

    await adapter.deployRevision(creds, release(3));
    // r2 serves while r3 rolls out, so only r1 stops, and before r3 is created.
    expect(revisionPosts()).toEqual([`${revisionsPath}/${app}--r1/deactivate`]);
    expect(order('deactivate-r1', 'put-app-r3')).toEqual([true]);

    await adapter.serveRevision(creds, { ...target, revision: { revision: 1, name: `${app}--r1` }, replicas: 2 });
    // The traffic moves only once the activated r1 runs; then r3 stops (r2 is inactive already).
    expect(
      order(
        'activate-inactive-r1',
        'get-revision-r1-starting',
        'get-revision-r1-started',
        'patch-traffic-r1',
        'deactivate-r3',
      ),
    ).toEqual([true, true, true, true]);
    expect(replay.requestsOf('deactivate-r3').map((r) => r.path)).toEqual([`${revisionsPath}/${app}--r3/deactivate`]);
    expect(bodyOf('patch-traffic-r1').properties.configuration.ingress.traffic).toEqual([
      { revisionName: `${app}--r1`, weight: 100 },
    ]);
    expectAllServed();
  });

  it('rescales with a revision of the same release named by its count, since scale belongs to the template', async () => {
    const adapter = await scenario('signin', 'rescale');
    await adapter.setReplicas(creds, { ...target, replicas: 3 });
    const patch = bodyOf('patch-scale');
    expect(patch.properties.configuration).toEqual({ ingress: { traffic: [{ latestRevision: true, weight: 100 }] } });
    expect(patch.properties.template).toMatchObject({
      revisionSuffix: 'r2-x3',
      containers: [{ name: 'app', image: 'registry.example.com/acme/web:1' }],
      scale: { minReplicas: 3, maxReplicas: 3 },
    });
    expectAllServed();
  });

  it('refuses logs when the credentials name no workspace, saying what to add', async () => {
    const adapter = await scenario();
    const err = await failureOf(adapter.logs({ ...creds, logAnalyticsWorkspaceId: undefined }, target, { tail: 10 }));
    expect((err as ApplicationFailure).type).toBe(CLOUD_FAILURES.requestRefused);
    expect(cloudFailureDetails(err)!.hint).toContain('logAnalyticsWorkspaceId');
    expectAllServed();
  });

  it('destroys the app, and a second destroy finds nothing to remove', async () => {
    const adapter = await scenario('signin', 'destroy', 'destroy-gone');
    expect(await adapter.destroy(creds, target)).toEqual([`containerApps/${app}`]);
    expect(await adapter.destroy(creds, target)).toEqual([]);
    expectAllServed();
  });

  it('lists only the apps carrying our tags, across pages', async () => {
    const adapter = await scenario('signin', 'list-managed');
    expect(await adapter.listManaged(creds)).toEqual([
      {
        deploymentId,
        orgId: vars.orgId,
        id: `/subscriptions/${vars.sub}/resourceGroups/${vars.rg}/providers/Microsoft.App/containerApps/${app}`,
        kind: 'Microsoft.App/containerApps',
        region: 'westeurope',
      },
      {
        deploymentId: vars.otherDeploymentId,
        orgId: vars.orgId,
        id: `/subscriptions/${vars.sub}/resourceGroups/${vars.rg}/providers/Microsoft.App/containerApps/sother0000000000000000000000000a`,
        kind: 'Microsoft.App/containerApps',
        region: 'westeurope',
      },
    ]);
    expectAllServed();
  });

  it('maps a refused spec to a non-retryable CloudRequestRefused without the env values it quoted', async () => {
    const adapter = await scenario('signin', 'app-absent', 'deploy-refused');
    const err = await failureOf(adapter.deployRevision(creds, release(1, { env: { GREETING: 'hello-secret-value' } })));
    expect((err as ApplicationFailure).type).toBe(CLOUD_FAILURES.requestRefused);
    expect((err as ApplicationFailure).nonRetryable).toBe(true);
    const details = cloudFailureDetails(err)!;
    expect(details.message).toContain('ContainerAppInvalidSpec');
    expect(JSON.stringify(details)).not.toContain('hello-secret-value');
    expectAllServed();
  });

  it('leaves Azure being unavailable (503) retryable, after the SDK retried it', async () => {
    const adapter = await scenario('signin', 'get-unavailable');
    const err = await failureOf(adapter.status(creds, target));
    expect(cloudFailureDetails(err)).toBeUndefined();
    expect((err as ApplicationFailure).nonRetryable).toBeUndefined();
    expect(err.message).toContain('503');
    expect(replay.requestsOf('get-app-503')).toHaveLength(3);
    expectAllServed();
  });

  it('refuses limits no Container Apps size covers before calling Azure', async () => {
    const adapter = await scenario();
    const err = await failureOf(adapter.deployRevision(creds, release(1, { limits: { memoryMb: 16_384, cpus: 2 } })));
    expect((err as ApplicationFailure).type).toBe(CLOUD_FAILURES.requestRefused);
    expectAllServed();
  });
});

describe('Entra ID sign-in failures', () => {
  const ctx = { creds, secrets: [creds.clientSecret] };
  const signIn = (message: string) => Object.assign(new Error(message), { name: 'AuthenticationRequiredError' });

  it('leaves a sign-in that never reached Entra ID retryable: an unreachable cloud is not refused credentials', () => {
    for (const message of [
      'network_error: network_error: Network request failed',
      'endpoints_resolution_error: Endpoints cannot be resolved',
    ]) {
      const err = azureFailure(signIn(message), 'list the container apps', ctx);
      expect([message, err instanceof ApplicationFailure]).toEqual([message, false]);
      expect(err.message).toContain('it will be retried');
    }
  });

  it('refuses credentials Entra ID refused, naming the reason', () => {
    const err = azureFailure(
      signIn(
        'invalid_client: Error(s): 7000215 - Description: AADSTS7000215: Invalid client secret provided. Trace ID: x',
      ),
      'list the container apps',
      ctx,
    ) as ApplicationFailure;
    expect([err.type, err.nonRetryable]).toEqual([CLOUD_FAILURES.credentialsRefused, true]);
  });
});
