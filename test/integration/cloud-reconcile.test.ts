import { randomUUID } from 'node:crypto';

import { DescribeServicesCommand, ECSClient } from '@aws-sdk/client-ecs';

import { cloudServiceName } from '@activities/providers/cloud';
import { createEcsAdapter } from '@activities/providers/cloud-ecs';
import type { EcsCredentials } from '@shared/cloud/credentials';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { connectAgent } from '../helpers/mcp';
import { ecsAccount, startMoto } from '../helpers/moto';
import { runReconcileSchedule } from '../helpers/reconcile';

/**
 * ECS on Fargate through the whole stack against moto (the real AWS SDK, the real adapter in the worker, which reads
 * the endpoint from AWS_ENDPOINT_URL as the SDK does): credentials set with PUT and tried by DescribeClusters, a
 * deployment made by the api, and the reconciler removing a service nothing of ours names any more while it leaves
 * the live deployment's, and another organisation's in the same account, alone.
 */
const REGION = 'eu-west-1';

describe('cloud_c_ecs_fargate through the api, and the reconciler finding a leaked service', () => {
  let moto: Awaited<ReturnType<typeof startMoto>>;
  let h: Harness;
  let creds: EcsCredentials;
  const saved = { ...process.env };

  beforeAll(async () => {
    moto = await startMoto();
    process.env.AWS_ENDPOINT_URL = moto.endpoint;
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    creds = await ecsAccount(REGION);
    h = await startHarness('cloud-reconcile', {
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
      RATE_LIMIT_DEPLOY_CREATE_PER_15MIN: '100000',
    });
  }, 600_000);
  afterAll(async () => {
    await h?.stop();
    process.env = saved;
    await moto?.stop();
  });

  const services = async (...deploymentIds: string[]) => {
    const ecs = new ECSClient({ region: REGION, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
    const r = await ecs.send(
      new DescribeServicesCommand({ cluster: 'apps', services: deploymentIds.map((id) => cloudServiceName(id, 32)) }),
    );
    return Object.fromEntries(
      deploymentIds.map((id) => [
        id,
        r.services?.find((s) => s.serviceName === cloudServiceName(id, 32))?.status ?? 'MISSING',
      ]),
    );
  };

  it('sets credentials tried by the cloud, deploys through the api, and reconciles only what is leaked and ours', async () => {
    const org = await h.newOrg('pro');
    const api = client(h, org.token);

    const refused = await api.call<{ message: string }>('PUT', '/platform/providers/cloud_c_ecs_fargate/credentials', {
      ...creds,
      cluster: 'no-such-cluster',
    });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toContain('no-such-cluster');
    expect(refused.body.message).not.toContain(creds.secretAccessKey);

    const put = await api.call<{ data: { identity: string; regions: string[] } }>(
      'PUT',
      '/platform/providers/cloud_c_ecs_fargate/credentials',
      creds,
    );
    expect([put.status, put.body.data]).toEqual([
      200,
      expect.objectContaining({ identity: creds.accessKeyId, regions: [REGION] }),
    ]);

    // A deployment the api made: its service is created by the workflow's cloud path.
    const created = await api.post<{ data: { deployment: { id: string; region: string } } }>('/platform/deployments', {
      name: 'web',
      image: 'nginx:1.27',
      port: 8080,
      provider: 'cloud_c_ecs_fargate',
    });
    expect(created.status).toBe(202);
    const live = created.body.data.deployment.id;
    expect(created.body.data.deployment.region).toBe(REGION);
    // moto runs no task, so the rollout never ends: the deployment stays deploying, its service ACTIVE.
    await eventually(async () => ((await services(live))[live] === 'ACTIVE' ? true : undefined), 'its ECS service');

    // What a lost destroy leaves behind: a service of ours that no record names, and one of another organisation.
    const adapter = createEcsAdapter({ maxAttempts: 1 });
    const leaked = randomUUID();
    const foreign = randomUUID();
    const release = (deploymentId: string, orgId: string) => ({
      deploymentId,
      orgId,
      revision: 1,
      image: 'nginx:1.27',
      port: 8080,
      env: {},
      replicas: 1,
      limits: { memoryMb: 512, cpus: 0.25 },
      region: REGION,
    });
    await adapter.deployRevision(creds, release(leaked, org.orgId));
    await adapter.deployRevision(creds, release(foreign, randomUUID()));
    expect(await services(leaked, foreign)).toEqual({ [leaked]: 'ACTIVE', [foreign]: 'ACTIVE' });

    const report = await runReconcileSchedule(h);
    // Not `failed: 0`: the sweep covers every organisation in the suite's shared database, and another file may hold
    // credentials for a cloud only its own double answers (they count as failed here, and are tried again next sweep).
    expect(report.clouds!.accounts).toBeGreaterThanOrEqual(1);
    const removed = report.clouds!.removed.filter((r) => [leaked, live, foreign].includes(r.deploymentId));
    expect(removed.map((r) => r.deploymentId)).toEqual([leaked]);
    expect(removed[0]!.resources.length).toBeGreaterThan(0);
    const after = await services(leaked, live, foreign);
    expect(after[leaked]).not.toBe('ACTIVE');
    expect([after[live], after[foreign]]).toEqual(['ACTIVE', 'ACTIVE']);

    // Destroying the live one through the api removes its service too; then the credentials can go.
    expect((await api.del(`/platform/deployments/${live}`)).status).toBeLessThan(300);
    await eventually(async () => ((await services(live))[live] !== 'ACTIVE' ? true : undefined), 'its service removed');
    await eventually(
      async () =>
        (await api.del('/platform/providers/cloud_c_ecs_fargate/credentials')).status === 204 ? true : undefined,
      'the credentials to be removable once nothing runs on the cloud',
    );
    await adapter.destroy(creds, { deploymentId: foreign, region: REGION });
  });

  it('lets an agent see the providers and set, list and remove the credentials through MCP tools', async () => {
    const org = await h.newOrg('pro');
    const other = await h.newOrg('pro');
    const agent = await connectAgent(h.baseUrl, org.token);
    const ecs = async (call = agent.call) =>
      (await call('list_providers', {})).s.providers.find((p: { id: string }) => p.id === 'cloud_c_ecs_fargate');
    try {
      expect(await ecs()).toMatchObject({ available: false, reason: expect.stringContaining('no credentials') });

      // A wrong field is named by its path under credentials, before anything reaches the cloud.
      const { cluster: _cluster, ...withoutCluster } = creds;
      const malformed = await agent.call('set_cloud_credentials', {
        provider: 'cloud_c_ecs_fargate',
        credentials: withoutCluster,
      });
      expect(malformed.isError).toBe(true);
      expect(malformed.s).toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringContaining('credentials.cluster'),
      });
      // Another cloud's shape for this one is refused the same way.
      const mismatched = await agent.call('set_cloud_credentials', {
        provider: 'cloud_a_run',
        credentials: creds,
      });
      expect(mismatched.s).toMatchObject({
        code: 'INVALID_REQUEST',
        message: expect.stringContaining('credentials.serviceAccountKey'),
      });
      // Refused by the cloud: nothing saved, and the secret is not in the answer.
      const refused = await agent.call('set_cloud_credentials', {
        provider: 'cloud_c_ecs_fargate',
        credentials: { ...creds, cluster: 'no-such-cluster' },
      });
      // MCP shows the compat code; the platform's reason is in details.
      expect(refused.s).toMatchObject({
        code: 'INVALID_REQUEST',
        retryable: false,
        message: expect.stringMatching(
          /^cloud_c_ecs_fargate refused the credentials, so nothing was saved: .*no-such-cluster/,
        ),
        details: { provider: 'cloud_c_ecs_fargate', reason: expect.any(String) },
      });
      expect(refused.text).not.toContain(creds.secretAccessKey);
      expect(await ecs()).toMatchObject({ available: false });

      const set = await agent.call('set_cloud_credentials', { provider: 'cloud_c_ecs_fargate', credentials: creds });
      expect(set.isError).toBe(false);
      expect(set.s).toMatchObject({
        credentials: { provider: 'cloud_c_ecs_fargate', identity: creds.accessKeyId, regions: [REGION] },
        next: { tool: 'deploy', arguments: { provider: 'cloud_c_ecs_fargate', region: REGION } },
      });
      expect(set.text).not.toContain(creds.secretAccessKey);
      expect(await ecs()).toMatchObject({ available: true, regions: [REGION] });
      const listed = await agent.call('list_cloud_credentials', {});
      expect(listed.s.credentials).toEqual([expect.objectContaining({ provider: 'cloud_c_ecs_fargate' })]);
      expect(JSON.stringify(listed.s)).not.toContain(creds.secretAccessKey);

      // Another organisation sees none of it, and has nothing of it to remove.
      const outsider = await connectAgent(h.baseUrl, other.token);
      try {
        expect((await outsider.call('list_cloud_credentials', {})).s.credentials).toEqual([]);
        expect(await ecs(outsider.call)).toMatchObject({ available: false });
        const notTheirs = await outsider.call('remove_cloud_credentials', { provider: 'cloud_c_ecs_fargate' });
        expect(notTheirs.s).toMatchObject({
          code: 'INVALID_REQUEST',
          message: expect.stringContaining('The organisation has no credentials for cloud_c_ecs_fargate'),
        });
      } finally {
        await outsider.client.close();
      }

      const removed = await agent.call('remove_cloud_credentials', { provider: 'cloud_c_ecs_fargate' });
      expect(removed.s).toEqual({ provider: 'cloud_c_ecs_fargate', removed: true });
      expect(await ecs()).toMatchObject({ available: false });
      expect((await agent.call('list_cloud_credentials', {})).s.credentials).toEqual([]);
    } finally {
      await agent.client.close();
    }
  });
});
