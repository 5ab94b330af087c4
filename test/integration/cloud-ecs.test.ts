import { randomUUID } from 'node:crypto';

import {
  CloudWatchLogsClient,
  CreateLogStreamCommand,
  DescribeLogGroupsCommand,
  PutLogEventsCommand,
} from '@aws-sdk/client-cloudwatch-logs';
import {
  DeleteServiceCommand,
  DescribeServicesCommand,
  DescribeTaskDefinitionCommand,
  ECSClient,
  ListTaskDefinitionsCommand,
} from '@aws-sdk/client-ecs';
import {
  DescribeRulesCommand,
  DescribeTagsCommand,
  DescribeTargetGroupsCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';

import { CLOUD_FAILURES, cloudServiceName } from '@activities/providers/cloud';
import { createEcsAdapter } from '@activities/providers/cloud-ecs';
import type { EcsCredentials } from '@shared/cloud/credentials';

import { ecsAccount, startMoto } from '../helpers/moto';

/**
 * The ECS adapter with the real AWS SDK against moto in server mode (test/helpers/moto.ts). moto keeps the state of
 * every API but runs nothing: no task ever starts (runningCount is what moto sets, rollouts never complete or fail on
 * their own), no awslogs driver writes, no load balancer routes. So these tests check what the adapter asks of AWS
 * and reads back; failed rollouts are covered by the unit test of the status mapping (test/unit/cloud-ecs-errors).
 */
const REGION = 'eu-west-1';

describe('ECS Fargate adapter against moto', () => {
  let moto: Awaited<ReturnType<typeof startMoto>>;
  let creds: EcsCredentials;
  const saved = { ...process.env };
  const adapter = createEcsAdapter({ maxAttempts: 1 });
  const sdk = () => ({ region: REGION, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });

  beforeAll(async () => {
    moto = await startMoto();
    // The SDK reads its endpoint from here (shared/config.ts, "Cloud providers"): the adapter has no option for it.
    process.env.AWS_ENDPOINT_URL = moto.endpoint;
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    creds = await ecsAccount(REGION);
  }, 600_000);

  afterAll(async () => {
    process.env = saved;
    await moto?.stop();
  });

  const release = (deploymentId: string, revision: number, image = `nginx:1.${revision}`) => ({
    deploymentId,
    orgId: 'org-ecs',
    revision,
    image,
    port: 8080,
    env: { GREETING: `hello ${revision}` },
    replicas: 2,
    limits: { memoryMb: 600, cpus: 0.3 },
    region: REGION,
  });

  test('verify accepts the credentials and refuses a cluster that does not exist, naming it', async () => {
    await expect(adapter.verify(creds)).resolves.toBeUndefined();
    const err = await adapter.verify({ ...creds, cluster: 'nope' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ type: CLOUD_FAILURES.requestRefused, message: expect.stringContaining('"nope"') });
  });

  test('a deployment lives its life: deploy, redeploy, roll back, stop, start, read logs, destroy', async () => {
    const id = randomUUID();
    const name = cloudServiceName(id, 32);
    const ecs = new ECSClient(sdk());
    const elb = new ElasticLoadBalancingV2Client(sdk());
    const service = async () =>
      (await ecs.send(new DescribeServicesCommand({ cluster: 'apps', services: [name] }))).services![0]!;

    const first = await adapter.deployRevision(creds, release(id, 1));
    // A retry of the same release finds what the first attempt made.
    expect(await adapter.deployRevision(creds, release(id, 1))).toEqual(first);
    expect(first.name).toMatch(new RegExp(`:task-definition/${name}:1$`));
    expect(await service()).toMatchObject({ desiredCount: 2, taskDefinition: first.name, launchType: 'FARGATE' });
    const td = await ecs.send(new DescribeTaskDefinitionCommand({ taskDefinition: first.name, include: ['TAGS'] }));
    expect(td.taskDefinition).toMatchObject({
      cpu: '512',
      memory: '1024',
      networkMode: 'awsvpc',
      requiresCompatibilities: ['FARGATE'],
      containerDefinitions: [
        {
          image: 'nginx:1.1',
          portMappings: [expect.objectContaining({ containerPort: 8080 })],
          environment: [{ name: 'GREETING', value: 'hello 1' }],
          logConfiguration: {
            logDriver: 'awslogs',
            options: expect.objectContaining({ 'awslogs-group': `/slipway/${name}` }),
          },
        },
      ],
    });
    expect(td.tags).toEqual(
      expect.arrayContaining([
        { key: 'slipway-managed', value: 'true' },
        { key: 'slipway-deployment', value: id },
        { key: 'slipway-org', value: 'org-ecs' },
        { key: 'slipway-revision', value: '1' },
      ]),
    );
    const rules = (await elb.send(new DescribeRulesCommand({ ListenerArn: creds.loadBalancer.listenerArn }))).Rules!;
    const rule = rules.find((r) => r.Conditions?.[0]?.HostHeaderConfig?.Values?.[0] === `${name}.apps.example.com`);
    const tg = (await elb.send(new DescribeTargetGroupsCommand({ Names: [name] }))).TargetGroups![0]!;
    expect(tg).toMatchObject({ TargetType: 'ip', Port: 8080, VpcId: creds.loadBalancer.vpcId });
    expect(rule?.Actions?.[0]).toMatchObject({ Type: 'forward', TargetGroupArn: tg.TargetGroupArn });

    // moto never completes a rollout (its deployment stays IN_PROGRESS), so the service is still deploying.
    expect(await adapter.status(creds, { deploymentId: id, region: REGION })).toMatchObject({
      phase: 'deploying',
      desiredReplicas: 2,
      url: `https://${name}.apps.example.com`,
      message: expect.stringContaining('rollout in progress'),
    });

    const second = await adapter.deployRevision(creds, release(id, 2));
    expect(second.name).toMatch(/:2$/);
    expect((await service()).taskDefinition).toBe(second.name);

    await adapter.serveRevision(creds, { deploymentId: id, region: REGION, revision: first, replicas: 2 });
    expect((await service()).taskDefinition).toBe(first.name);

    await adapter.setReplicas(creds, { deploymentId: id, region: REGION, replicas: 0 });
    expect(await adapter.status(creds, { deploymentId: id, region: REGION })).toMatchObject({
      phase: 'stopped',
      desiredReplicas: 0,
    });
    await adapter.setReplicas(creds, { deploymentId: id, region: REGION, replicas: 1 });
    const started = await adapter.status(creds, { deploymentId: id, region: REGION });
    expect(started.desiredReplicas).toBe(1);
    expect(started.phase).not.toBe('stopped');

    // What awslogs would have written for two tasks: `<prefix>/<container>/<task id>` in the deployment's group.
    const logs = new CloudWatchLogsClient(sdk());
    // On a whole second, so `since` in epoch seconds falls exactly between lines.
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    for (const task of ['task1', 'task2']) {
      const logStreamName = `app/app/${task}`;
      await logs.send(new CreateLogStreamCommand({ logGroupName: `/slipway/${name}`, logStreamName }));
      await logs.send(
        new PutLogEventsCommand({
          logGroupName: `/slipway/${name}`,
          logStreamName,
          logEvents: [0, 1, 2, 3].map((i) => ({
            timestamp: t0 + i * 1000 + (task === 'task2' ? 500 : 0),
            message: `${task} line ${i}`,
          })),
        }),
      );
    }
    const target = { deploymentId: id, region: REGION };
    const tail2 = await adapter.logs(creds, target, { tail: 2 });
    expect(tail2.map((l) => `${l.instance}: ${l.message}`)).toEqual([
      'task1: task1 line 2',
      'task2: task2 line 2',
      'task1: task1 line 3',
      'task2: task2 line 3',
    ]);
    const recent = await adapter.logs(creds, target, { tail: 100, since: new Date(t0 + 2000).toISOString() });
    expect(recent.map((l) => l.message)).toEqual(['task1 line 2', 'task2 line 2', 'task1 line 3', 'task2 line 3']);
    const one = await adapter.logs(creds, target, { tail: 100, instance: 'task2', since: (t0 + 3000) / 1000 });
    expect(one).toEqual([
      { timestamp: new Date(t0 + 3500).toISOString(), stream: 'stdout', message: 'task2 line 3', instance: 'task2' },
    ]);

    const removed = await adapter.destroy(creds, target);
    expect(removed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ecs service /),
        `ecs task definition ${first.name}`,
        `ecs task definition ${second.name}`,
        `load balancer rule ${rule!.RuleArn}`,
        `target group ${tg.TargetGroupArn}`,
        `log group /slipway/${name}`,
      ]),
    );
    expect((await service()).status).toBe('INACTIVE');
    expect(
      (await ecs.send(new ListTaskDefinitionsCommand({ familyPrefix: name, status: 'ACTIVE' }))).taskDefinitionArns,
    ).toEqual([]);
    await expect(elb.send(new DescribeTargetGroupsCommand({ Names: [name] }))).rejects.toMatchObject({
      name: 'TargetGroupNotFoundException',
    });
    const after = (await elb.send(new DescribeRulesCommand({ ListenerArn: creds.loadBalancer.listenerArn }))).Rules!;
    expect(after.find((r) => r.RuleArn === rule!.RuleArn)).toBeUndefined();
    expect(
      (await logs.send(new DescribeLogGroupsCommand({ logGroupNamePrefix: `/slipway/${name}` }))).logGroups,
    ).toEqual([]);
    expect(await adapter.status(creds, target)).toMatchObject({ phase: 'absent', url: null });
    // Everything is gone already: the second destroy removes nothing.
    expect(await adapter.destroy(creds, target)).toEqual([]);
    expect((await adapter.listManaged(creds)).filter((r) => r.deploymentId === id)).toEqual([]);
  });

  test('the reconciler finds a leaked service, and the target group and log group a lost service left', async () => {
    const leaked: string = randomUUID();
    const halfGone: string = randomUUID();
    await adapter.deployRevision(creds, release(leaked, 1));
    await adapter.deployRevision(creds, release(halfGone, 1));
    // A destroy that stopped after the service: its target group and log group stay behind.
    await new ECSClient(sdk()).send(
      new DeleteServiceCommand({ cluster: 'apps', service: cloudServiceName(halfGone, 32), force: true }),
    );

    const found = await adapter.listManaged(creds);
    expect(found).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ deploymentId: leaked, orgId: 'org-ecs', kind: 'ecs-service', region: REGION }),
        expect.objectContaining({ deploymentId: halfGone, orgId: 'org-ecs', kind: 'target-group' }),
        expect.objectContaining({ deploymentId: halfGone, orgId: 'org-ecs', kind: 'log-group' }),
      ]),
    );
    expect(found.filter((r) => r.deploymentId === leaked).map((r) => r.kind)).toEqual(['ecs-service']);
    const tg = (
      await new ElasticLoadBalancingV2Client(sdk()).send(
        new DescribeTargetGroupsCommand({ Names: [cloudServiceName(leaked, 32)] }),
      )
    ).TargetGroups![0]!;
    const tags = await new ElasticLoadBalancingV2Client(sdk()).send(
      new DescribeTagsCommand({ ResourceArns: [tg.TargetGroupArn!] }),
    );
    expect(tags.TagDescriptions![0]!.Tags).toEqual(expect.arrayContaining([{ Key: 'slipway-org', Value: 'org-ecs' }]));

    for (const id of [leaked, halfGone]) await adapter.destroy(creds, { deploymentId: id, region: REGION });
    expect((await adapter.listManaged(creds)).filter((r) => [leaked, halfGone].includes(r.deploymentId))).toEqual([]);
  });

  test('credentials with a role to assume (and its external ID) work', async () => {
    await expect(
      adapter.verify({ ...creds, roleArn: 'arn:aws:iam::123456789012:role/slipway', externalId: 'ext-123' }),
    ).resolves.toBeUndefined();
  });

  test('a plan larger than any Fargate size is refused before anything is made', async () => {
    const id = randomUUID();
    const err = await adapter
      .deployRevision(creds, { ...release(id, 1), limits: { memoryMb: 512, cpus: 32 } })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ type: CLOUD_FAILURES.requestRefused });
    expect((await adapter.listManaged(creds)).filter((r) => r.deploymentId === id)).toEqual([]);
  });
});

describe('ECS Fargate adapter against moto that checks keys', () => {
  let moto: Awaited<ReturnType<typeof startMoto>>;
  const saved = { ...process.env };

  beforeAll(async () => {
    // moto checks signatures against its IAM users once this many calls were let through: none here.
    moto = await startMoto({ INITIAL_NO_AUTH_ACTION_COUNT: '0' });
    process.env.AWS_ENDPOINT_URL = moto.endpoint;
  }, 600_000);

  afterAll(async () => {
    process.env = saved;
    await moto?.stop();
  });

  // moto answers ECS's JSON protocol with an XML error when it refuses a signature, which no SDK can read; STS speaks
  // XML itself, so the role to assume is where moto can refuse unknown keys the way AWS does.
  test('keys AWS does not know are refused as credentials, without the secret in the message', async () => {
    const err = await createEcsAdapter({ maxAttempts: 1 })
      .verify({
        accessKeyId: 'AKIAUNKNOWNKEY',
        secretAccessKey: 'wrong-secret-value',
        roleArn: 'arn:aws:iam::123456789012:role/slipway',
        externalId: 'ext-123',
        cluster: 'apps',
        subnets: ['subnet-1'],
        securityGroups: ['sg-1'],
        executionRoleArn: 'arn:aws:iam::123456789012:role/x',
        assignPublicIp: false,
        loadBalancer: {
          listenerArn: 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:listener/app/a/b/c',
          vpcId: 'vpc-1',
          hostSuffix: 'apps.example.com',
          scheme: 'https',
        },
        regions: [REGION],
      })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ type: CLOUD_FAILURES.credentialsRefused });
    expect(String((err as Error).message)).not.toContain('wrong-secret-value');
  });
});
