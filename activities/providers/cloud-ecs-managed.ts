import * as logsApi from '@aws-sdk/client-cloudwatch-logs';
import * as ecsApi from '@aws-sdk/client-ecs';
import * as elbApi from '@aws-sdk/client-elastic-load-balancing-v2';

import type { EcsCredentials } from '@shared/cloud/credentials';

import { CLOUD_LABELS, type ManagedResource } from './cloud';
import { aws, type EcsClients } from './cloud-ecs-shapes';

/** Our service, target group and task definition family names: `s` and 31 hex digits (cloudServiceName). */
const OUR_NAME = /^s[0-9a-f]{31}$/;

const managed = (tags: Record<string, string | undefined>) =>
  tags[CLOUD_LABELS.managed] === 'true' && tags[CLOUD_LABELS.deployment] && tags[CLOUD_LABELS.org]
    ? { deploymentId: tags[CLOUD_LABELS.deployment]!, orgId: tags[CLOUD_LABELS.org]! }
    : undefined;

/**
 * Everything in one region carrying CLOUD_LABELS.managed, for the reconciler: the services on the credentials'
 * cluster, and the target groups and log groups a half-finished deploy or destroy left without a service.
 */
export async function managedResources(
  c: EcsClients,
  creds: EcsCredentials,
  region: string,
): Promise<ManagedResource[]> {
  const found: ManagedResource[] = [];
  const withService = new Set<string>();

  const serviceArns: string[] = [];
  let nextToken: string | undefined;
  do {
    const page = await aws('list the ECS services', () =>
      c.ecs.send(new ecsApi.ListServicesCommand({ cluster: creds.cluster, nextToken })),
    );
    serviceArns.push(...(page.serviceArns ?? []));
    nextToken = page.nextToken;
  } while (nextToken);
  // DescribeServices takes 10 at a time, and returns each service's tags when asked.
  for (let i = 0; i < serviceArns.length; i += 10) {
    const out = await aws('read the ECS services', () =>
      c.ecs.send(
        new ecsApi.DescribeServicesCommand({
          cluster: creds.cluster,
          services: serviceArns.slice(i, i + 10),
          include: ['TAGS'],
        }),
      ),
    );
    for (const s of out.services ?? []) {
      if (s.status === 'INACTIVE' || !s.serviceArn) continue;
      const owner = managed(Object.fromEntries((s.tags ?? []).map((t) => [t.key ?? '', t.value])));
      if (!owner) continue;
      withService.add(owner.deploymentId);
      found.push({ ...owner, id: s.serviceArn, kind: 'ecs-service', region });
    }
  }

  const groups: string[] = [];
  let Marker: string | undefined;
  do {
    const page = await aws('list the target groups', () =>
      c.elb.send(new elbApi.DescribeTargetGroupsCommand({ Marker })),
    );
    for (const g of page.TargetGroups ?? [])
      if (g.TargetGroupArn && OUR_NAME.test(g.TargetGroupName ?? '') && g.VpcId === creds.loadBalancer.vpcId)
        groups.push(g.TargetGroupArn);
    Marker = page.NextMarker;
  } while (Marker);
  // DescribeTags takes 20 resources at a time.
  for (let i = 0; i < groups.length; i += 20) {
    const out = await aws('read the target group tags', () =>
      c.elb.send(new elbApi.DescribeTagsCommand({ ResourceArns: groups.slice(i, i + 20) })),
    );
    for (const d of out.TagDescriptions ?? []) {
      const owner = managed(Object.fromEntries((d.Tags ?? []).map((t) => [t.Key ?? '', t.Value])));
      if (owner && d.ResourceArn && !withService.has(owner.deploymentId))
        found.push({ ...owner, id: d.ResourceArn, kind: 'target-group', region });
    }
  }

  let logToken: string | undefined;
  do {
    const page = await aws('list the log groups', () =>
      c.logs.send(new logsApi.DescribeLogGroupsCommand({ logGroupNamePrefix: '/slipway/', nextToken: logToken })),
    );
    for (const g of page.logGroups ?? []) {
      if (!g.arn || !g.logGroupName) continue;
      // The group's ARN ends in `:*` in this answer; its tags are asked of the ARN without it.
      const arn = g.arn.replace(/:\*$/, '');
      const tags = await aws('read the log group tags', () =>
        c.logs.send(new logsApi.ListTagsForResourceCommand({ resourceArn: arn })),
      );
      const owner = managed(tags.tags ?? {});
      if (owner && !withService.has(owner.deploymentId))
        found.push({ ...owner, id: g.logGroupName, kind: 'log-group', region });
    }
    logToken = page.nextToken;
  } while (logToken);
  return found;
}
