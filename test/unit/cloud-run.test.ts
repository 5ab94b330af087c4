import { generateKeyPairSync } from 'node:crypto';

import { CLOUD_FAILURES, cloudFailureDetails, type CloudReleaseSpec } from '@activities/providers/cloud';
import { createRunAdapter } from '@activities/providers/cloud-run';
import { serviceId } from '@activities/providers/cloud-run-shapes';
import type { RunCredentials } from '@shared/cloud/credentials';

import { loadScenario, type Replay, startReplay } from '../helpers/cloud-replay';

/**
 * cloud_a_run with the real adapter and Google's real SDKs (@google-cloud/run, @google-cloud/logging, REST mode)
 * against Cloud Run Admin API v2 and Cloud Logging exchanges written from their REST references
 * (test/fixtures/cloud/run, each naming its source).
 */

const deploymentId = '3f2b8c1e-0d4a-4e7b-9a61-5c2d8e9f7a10';
const orgId = '7c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const project = 'acme-prod-4821';
const region = 'europe-west1';
const email = 'slipway-deployer@acme-prod-4821.iam.gserviceaccount.com';
const service = serviceId(deploymentId);
const servicePath = `projects/${project}/locations/${region}/services/${service}`;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const credentials: RunCredentials = {
  serviceAccountKey: {
    type: 'service_account',
    project_id: project,
    client_email: email,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    private_key_id: '1f2e3d4c5b6a79880716253443526170',
  },
  regions: [region],
};

const release = (revision: number): CloudReleaseSpec => ({
  deploymentId,
  orgId,
  revision,
  image: `europe-west1-docker.pkg.dev/${project}/apps/web:${revision}`,
  port: 8080,
  env: { NODE_ENV: 'production', API_TOKEN: 'tok-9f8e7d6c5b4a' },
  replicas: 2,
  limits: { memoryMb: 300, cpus: 0.5 },
  region,
});

let replay: Replay | undefined;

async function scenario(...files: string[]) {
  replay = await startReplay(loadScenario(...files.map((f) => `run/${f}.json`)), {
    vars: { project, region, service, deployment: deploymentId, org: orgId, email },
  });
  const endpoint = replay.origin;
  return createRunAdapter({
    CLOUD_A_RUN_ENDPOINT: endpoint,
    CLOUD_A_LOGGING_ENDPOINT: endpoint,
    CLOUD_A_TOKEN_URL: `${endpoint}/token`,
  });
}

afterEach(async () => {
  const r = replay;
  replay = undefined;
  await r?.stop();
  expect(r?.mismatches).toEqual([]);
  expect(r?.pending()).toEqual([]);
});

/** The CloudFailure an awaited call threw, or fails. */
async function failureOf(p: Promise<unknown>) {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as { type?: string; nonRetryable?: boolean; message: string },
  );
  expect(err).toBeDefined();
  return err!;
}

describe('cloud_a_run verify', () => {
  it('lists the services of each region with the service account', async () => {
    const run = await scenario('verify-ok');

    await run.verify(credentials);

    const [list] = replay!.requestsOf('list services');
    expect(String(list!.headers.authorization)).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
  });

  it('refuses credentials without the permission, naming the roles to grant', async () => {
    const run = await scenario('verify-refused');

    const err = await failureOf(run.verify(credentials));

    expect(err.type).toBe(CLOUD_FAILURES.credentialsRefused);
    expect(err.nonRetryable).toBe(true);
    expect(err.message).toContain("Permission 'run.services.list' denied");
    expect(cloudFailureDetails(err)?.hint).toContain('roles/run.admin');
  });
});

describe('cloud_a_run lifecycle', () => {
  it('deploys, serves, rolls back, stops, starts, reads logs and destroys', async () => {
    const run = await scenario(
      'deploy-create',
      'status-serving-r1',
      'deploy-update',
      'serve-r1',
      'scale-stop',
      'scale-start',
      'logs',
      'destroy',
    );
    const target = { deploymentId, region };

    expect(await run.deployRevision(credentials, release(1))).toEqual({ revision: 1, name: `${service}-r1` });
    const [create] = replay!.requestsOf('create service');
    expect(create!.query.serviceId).toBe(service);
    const labels = { 'slipway-managed': 'true', 'slipway-deployment': deploymentId, 'slipway-org': orgId };
    // As the SDK writes it: empty maps included, enums as numbers ($alt=json;enum-encoding=int).
    expect(create!.body).toEqual({
      labels,
      annotations: {},
      invokerIamDisabled: true,
      ingress: 1, // INGRESS_TRAFFIC_ALL
      template: {
        revision: `${service}-r1`,
        labels,
        annotations: {},
        containers: [
          {
            image: release(1).image,
            ports: [{ containerPort: 8080 }],
            env: [
              { name: 'NODE_ENV', value: 'production' },
              { name: 'API_TOKEN', value: 'tok-9f8e7d6c5b4a' },
            ],
            // 0.5 cpu and 300 MB rounded up to Cloud Run's smallest size without request concurrency 1.
            resources: { limits: { cpu: '1', memory: '512Mi' } },
          },
        ],
      },
      traffic: [{ type: 1, percent: 100 }], // TRAFFIC_TARGET_ALLOCATION_TYPE_LATEST
      scaling: { scalingMode: 2, manualInstanceCount: 2 }, // MANUAL
    });

    expect(await run.status(credentials, target)).toEqual({
      phase: 'serving',
      serving: { revision: 1, name: `${service}-r1` },
      desiredReplicas: 2,
      runningReplicas: 2,
      url: `https://${service}-x7kq3vbn5a-ew.a.run.app`,
      at: '2025-06-02T10:16:04.512Z',
    });

    expect(await run.deployRevision(credentials, release(2))).toEqual({ revision: 2, name: `${service}-r2` });
    const [update] = replay!.requestsOf('update service to r2');
    const sent = update!.body as { template: { revision: string; containers: { image: string }[] } };
    expect(update!.path).toBe(`/v2/${servicePath}`);
    expect(sent.template.revision).toBe(`${service}-r2`);
    expect(sent.template.containers[0]!.image).toBe(release(2).image);

    await run.serveRevision(credentials, { ...target, revision: { revision: 1, name: `${service}-r1` }, replicas: 2 });
    const [serve] = replay!.requestsOf('traffic to r1');
    const served = serve!.body as { traffic: unknown; template: { revision: string } };
    expect(served.traffic).toEqual([{ type: 2, revision: `${service}-r1`, percent: 100 }]);
    expect(served.template.revision).toBe(`${service}-r2`);

    await run.setReplicas(credentials, { ...target, replicas: 0 });
    expect((replay!.requestsOf('scale to 0')[0]!.body as { scaling: unknown }).scaling).toEqual({
      scalingMode: 2,
      manualInstanceCount: 0,
    });
    expect(await run.status(credentials, target)).toMatchObject({
      phase: 'stopped',
      serving: { revision: 1 },
      desiredReplicas: 0,
      runningReplicas: 0,
    });
    await run.setReplicas(credentials, { ...target, replicas: 2 });
    expect((replay!.requestsOf('scale to 2')[0]!.body as { scaling: unknown }).scaling).toEqual({
      scalingMode: 2,
      manualInstanceCount: 2,
    });

    const lines = await run.logs(credentials, target, { tail: 3, since: '2025-06-02T10:00:00Z' });
    const [list] = replay!.requestsOf('list entries');
    expect(list!.body).toMatchObject({
      resourceNames: [`projects/${project}`],
      orderBy: 'timestamp desc',
      pageSize: 3,
    });
    const filter = (list!.body as { filter: string }).filter;
    expect(filter).toContain(`resource.type="cloud_run_revision" AND resource.labels.service_name="${service}"`);
    expect(filter).toContain('timestamp>="2025-06-02T10:00:00.000Z"');
    expect(lines.map((l) => [l.timestamp, l.stream, l.message])).toEqual([
      ['2025-06-02T10:20:03.250Z', 'stdout', 'listening on :8080'],
      ['2025-06-02T10:20:04.001Z', 'stderr', 'warning: cache cold'],
      ['2025-06-02T10:20:05.913Z', 'stdout', 'GET /health 200'],
    ]);
    expect(lines[0]!.instance).toMatch(/^0066d924/);

    expect(await run.destroy(credentials, target)).toEqual([servicePath]);
    expect(await run.destroy(credentials, target)).toEqual([]);
  });
});

describe('cloud_a_run listManaged and registryAuth', () => {
  it('returns only the services carrying our labels, across pages', async () => {
    const run = await scenario('list-managed');

    expect(await run.listManaged(credentials)).toEqual([
      { deploymentId, orgId, id: servicePath, kind: 'run.googleapis.com/Service', region },
      {
        deploymentId: '0b7e4d2c-9a1f-4e3b-8c6d-5a4f3e2d1c0b',
        orgId,
        id: `projects/${project}/locations/${region}/services/s0b7e4d2c9a1f4e3b8c6d5a4f3e2d1c0b`,
        kind: 'run.googleapis.com/Service',
        region,
      },
    ]);
  });

  it('signs in to the registry with an access token from the server’s token endpoint', async () => {
    const run = await scenario('oauth-token');

    expect(await run.registryAuth(credentials)).toEqual({
      username: 'oauth2accesstoken',
      password: 'ya29.c.b0AXv0zTPfake-replayed-access-token',
    });
    const form = new URLSearchParams(String(replay!.requestsOf('token')[0]!.body));
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const claims = JSON.parse(Buffer.from(form.get('assertion')!.split('.')[1]!, 'base64url').toString()) as {
      iss: string;
      scope: string;
    };
    expect(claims).toMatchObject({ iss: email, scope: 'https://www.googleapis.com/auth/cloud-platform' });
  });
});

describe('cloud_a_run errors', () => {
  it('refuses an invalid request for good, retries reads itself and leaves transient write failures to Temporal', async () => {
    const run = await scenario('errors');
    const target = { deploymentId, region };

    const refused = await failureOf(run.deployRevision(credentials, release(1)));
    expect(refused.type).toBe(CLOUD_FAILURES.requestRefused);
    expect(refused.nonRetryable).toBe(true);
    expect(refused.message).toContain('image name must be lowercase');

    // One 503 on a read: the SDK's HTTP client retries it and the call succeeds.
    expect((await run.status(credentials, target)).phase).toBe('serving');
    expect(replay!.requestsOf('get unavailable')).toHaveLength(1);

    // A 503 on a write is thrown as is (not a CloudFailure), so the activity's retry policy applies.
    const transient = await failureOf(run.setReplicas(credentials, { ...target, replicas: 3 }));
    expect(transient.type).toBeUndefined();
    expect(cloudFailureDetails(transient)).toBeUndefined();
    expect((transient as { code?: number }).code).toBe(14);
  });
});
