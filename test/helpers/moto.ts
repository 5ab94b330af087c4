import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { CreateSecurityGroupCommand, CreateSubnetCommand, CreateVpcCommand, EC2Client } from '@aws-sdk/client-ec2';
import { CreateClusterCommand, ECSClient } from '@aws-sdk/client-ecs';
import {
  CreateListenerCommand,
  CreateLoadBalancerCommand,
  ElasticLoadBalancingV2Client,
} from '@aws-sdk/client-elastic-load-balancing-v2';

import { ensureMoto } from '@scripts/stack/moto';
import { freePort, startProcess, waitUntil } from '@scripts/stack/process';
import type { EcsCredentials } from '@shared/cloud/credentials';

/**
 * moto in server mode on a free loopback port: the AWS APIs with their real wire format, for the ECS adapter's tests
 * (the real AWS SDK talks to it through AWS_ENDPOINT_URL). Installed into the tool cache on first use. `env` is passed
 * to moto (MOTO_ECS_SERVICE_RUNNING makes new services report that many running tasks).
 */
export async function startMoto(env: Record<string, string> = {}) {
  const server = await ensureMoto((line) => console.log(`[moto] ${line}`));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'slipway-moto-'));
  const port = await freePort();
  const proc = startProcess('moto', server, ['-H', '127.0.0.1', '-p', String(port)], {
    logFile: path.join(dir, 'moto.log'),
    env: { ...process.env, ...env },
  });
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntil('moto_server', async () => (await fetch(`${endpoint}/moto-api/`)).ok, {
      timeoutMs: 60_000,
      proc,
    });
  } catch (err) {
    await proc.stop();
    throw err;
  }
  return {
    endpoint,
    async stop() {
      await proc.stop();
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * An AWS account on moto as an organisation would bring it for ECS on Fargate: a VPC with two subnets, a security
 * group, the cluster `apps` and an Application Load Balancer with its listener; returns the credentials naming them.
 * The SDK must already point at moto (AWS_ENDPOINT_URL).
 */
export async function ecsAccount(region: string): Promise<EcsCredentials> {
  const sdk = () => ({ region, credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } });
  const ec2 = new EC2Client(sdk());
  const vpc = (await ec2.send(new CreateVpcCommand({ CidrBlock: '10.0.0.0/16' }))).Vpc!.VpcId!;
  const subnets = await Promise.all(
    ['a', 'b'].map(
      async (az, i) =>
        (
          await ec2.send(
            new CreateSubnetCommand({ VpcId: vpc, CidrBlock: `10.0.${i}.0/24`, AvailabilityZone: `${region}${az}` }),
          )
        ).Subnet!.SubnetId!,
    ),
  );
  const sg = (await ec2.send(new CreateSecurityGroupCommand({ GroupName: 'apps', Description: 'apps', VpcId: vpc })))
    .GroupId!;
  await new ECSClient(sdk()).send(new CreateClusterCommand({ clusterName: 'apps' }));
  const elb = new ElasticLoadBalancingV2Client(sdk());
  const lb = (await elb.send(new CreateLoadBalancerCommand({ Name: 'apps', Subnets: subnets, SecurityGroups: [sg] })))
    .LoadBalancers![0]!.LoadBalancerArn!;
  const listener = (
    await elb.send(
      new CreateListenerCommand({
        LoadBalancerArn: lb,
        Protocol: 'HTTP',
        Port: 80,
        DefaultActions: [{ Type: 'fixed-response', FixedResponseConfig: { StatusCode: '404' } }],
      }),
    )
  ).Listeners![0]!.ListenerArn!;
  return {
    accessKeyId: 'AKIAEXAMPLEKEY',
    secretAccessKey: 'a-secret-key-never-shown',
    cluster: 'apps',
    subnets,
    securityGroups: [sg],
    executionRoleArn: 'arn:aws:iam::123456789012:role/ecsTaskExecutionRole',
    assignPublicIp: false,
    loadBalancer: { listenerArn: listener, vpcId: vpc, hostSuffix: 'apps.example.com', scheme: 'https' },
    regions: [region],
  };
}
