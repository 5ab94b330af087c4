import { createHash } from 'node:crypto';

import * as logsApi from '@aws-sdk/client-cloudwatch-logs';
import { CloudWatchLogsClient, type OutputLogEvent } from '@aws-sdk/client-cloudwatch-logs';
import { ECRClient, GetAuthorizationTokenCommand } from '@aws-sdk/client-ecr';
import * as ecsApi from '@aws-sdk/client-ecs';
import { ECSClient, type Service } from '@aws-sdk/client-ecs';
import * as elbApi from '@aws-sdk/client-elastic-load-balancing-v2';
import { ElasticLoadBalancingV2Client, type Rule } from '@aws-sdk/client-elastic-load-balancing-v2';
import { fromTemporaryCredentials } from '@aws-sdk/credential-providers';

import type { EcsCredentials } from '@shared/cloud/credentials';
import type { LogQuery, ProviderLogLine } from '@shared/engine/observe';

import { CLOUD_LABELS, type CloudAdapter, type CloudRevision, cloudServiceName, type ManagedResource } from './cloud';
import { managedResources } from './cloud-ecs-managed';
import {
  aws,
  awsUnless,
  type EcsClients as Clients,
  fargateSize,
  refused,
  REVISION_TAG,
  serviceStatus,
} from './cloud-ecs-shapes';

/**
 * cloud_c_ecs_fargate (activities/providers/cloud.ts) on Amazon ECS with Fargate, with AWS's official SDK v3: a
 * deployment is one ECS service on the credentials' cluster, named like its target group (32 characters at most), a
 * release one revision of the task definition family of that name (tagged slipway-revision=N), its URL a host rule on
 * the org's shared load balancer listener, its logs the log group /slipway/<service> the awslogs driver writes to.
 *
 * Where the SDK talks is its own setting (AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_ECS, …), never the tenant's.
 */

export interface EcsDeps {
  /** Attempts per call including the first (the SDK's own retries, before Temporal's); AWS's default is 3. */
  maxAttempts?: number;
  now?: () => Date;
}

/**
 * ECS throttles per account and API with a token bucket (its "Request throttling" page): AWS's guidance is the SDK's
 * adaptive mode, which backs off and also slows the client down while throttled. Clients are kept per credentials and
 * region so that state outlives one call.
 */
const RETRY_MODE = 'adaptive';
const MAX_ATTEMPTS = 5;
/** Clients kept per set of credentials and region (assumed-role sessions are cached inside them too). */
const MAX_CACHED = 50;
const MAX_TAIL = 10_000;
/** awslogs names each stream `<prefix>/<container>/<task id>`: the task ID is the instance. */
const CONTAINER = 'app';
const STREAM_PREFIX = 'app';
/** Log streams read when no instance is named: each task writes its own, the newest are the live ones. */
const MAX_STREAMS = 20;
/** Seconds the load balancer's failed health checks are ignored after a task starts (an app's boot). */
const HEALTH_GRACE_S = 60;
/** AWS's names for "no such …", per API (the SDK's exception name, and the wire code some answers carry). */
const TG_GONE = ['TargetGroupNotFoundException', 'TargetGroupNotFound'];
const LISTENER_GONE = ['ListenerNotFoundException', 'ListenerNotFound'];

export const logGroupOf = (service: string) => `/slipway/${service}`;
const instanceStream = (taskId: string) => `${STREAM_PREFIX}/${CONTAINER}/${taskId}`;

export function createEcsAdapter(deps: EcsDeps = {}): CloudAdapter<'cloud_c_ecs_fargate'> {
  const cache = new Map<string, Clients>();
  const now = deps.now ?? (() => new Date());
  const retry = { retryMode: RETRY_MODE, maxAttempts: deps.maxAttempts ?? MAX_ATTEMPTS };

  function clients(creds: EcsCredentials, region: string): Clients {
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          creds.accessKeyId,
          creds.secretAccessKey,
          creds.sessionToken,
          creds.roleArn,
          creds.externalId,
          region,
        ]),
      )
      .digest('hex');
    const hit = cache.get(key);
    if (hit) {
      // Most recently used last, so the oldest is the one dropped.
      cache.delete(key);
      cache.set(key, hit);
      return hit;
    }
    const keys = {
      accessKeyId: creds.accessKeyId,
      secretAccessKey: creds.secretAccessKey,
      ...(creds.sessionToken ? { sessionToken: creds.sessionToken } : {}),
    };
    const credentials = creds.roleArn
      ? fromTemporaryCredentials({
          masterCredentials: keys,
          params: {
            RoleArn: creds.roleArn,
            RoleSessionName: 'slipway',
            ...(creds.externalId ? { ExternalId: creds.externalId } : {}),
          },
          clientConfig: { region },
        })
      : keys;
    const config = { region, credentials, ...retry };
    const made: Clients = {
      ecs: new ECSClient(config),
      elb: new ElasticLoadBalancingV2Client(config),
      logs: new CloudWatchLogsClient(config),
      ecr: new ECRClient(config),
    };
    cache.set(key, made);
    if (cache.size > MAX_CACHED) {
      const [oldest, old] = cache.entries().next().value as [string, Clients];
      cache.delete(oldest);
      for (const c of Object.values(old)) (c as { destroy(): void }).destroy();
    }
    return made;
  }

  const hostOf = (creds: EcsCredentials, service: string) => `${service}.${creds.loadBalancer.hostSuffix}`;
  const urlOf = (creds: EcsCredentials, service: string) => `${creds.loadBalancer.scheme}://${hostOf(creds, service)}`;

  async function describeService(c: Clients, creds: EcsCredentials, name: string): Promise<Service | undefined> {
    const out = await aws('read the ECS service', () =>
      c.ecs.send(new ecsApi.DescribeServicesCommand({ cluster: creds.cluster, services: [name] })),
    );
    const found = out.failures?.find((f) => f.reason === 'MISSING');
    if (out.failures?.length && !found) {
      throw refused(
        `ECS could not read service ${name} on cluster ${creds.cluster}: ${out.failures.map((f) => f.reason).join(', ')}`,
        'Check that the cluster exists in the region and the credentials may read it.',
      );
    }
    return out.services?.find((s) => s.serviceName === name);
  }

  /** Task definition ARNs of the family, newest first (ECS numbers each registration). */
  async function familyArns(c: Clients, family: string, status: 'ACTIVE' | 'INACTIVE'): Promise<string[]> {
    const arns: string[] = [];
    let nextToken: string | undefined;
    do {
      const page = await aws('list task definitions', () =>
        c.ecs.send(new ecsApi.ListTaskDefinitionsCommand({ familyPrefix: family, status, sort: 'DESC', nextToken })),
      );
      // familyPrefix is a prefix: another family may start with ours.
      arns.push(...(page.taskDefinitionArns ?? []).filter((a) => a.split('/').pop()?.split(':')[0] === family));
      nextToken = page.nextToken;
    } while (nextToken);
    return arns;
  }

  async function revisionTag(c: Clients, arn: string): Promise<number | undefined> {
    const out = await aws('read a task definition', () =>
      c.ecs.send(new ecsApi.DescribeTaskDefinitionCommand({ taskDefinition: arn, include: ['TAGS'] })),
    );
    const v = Number(out.tags?.find((t) => t.key === REVISION_TAG)?.value);
    return Number.isInteger(v) ? v : undefined;
  }

  /** The task definition a previous attempt registered for this release, if any (found newest first). */
  async function registeredRevision(c: Clients, family: string, revision: number): Promise<string | undefined> {
    for (const arn of await familyArns(c, family, 'ACTIVE')) {
      const tagged = await revisionTag(c, arn);
      if (tagged === revision) return arn;
      // Releases register in increasing order: past an older one, ours was never registered.
      if (tagged !== undefined && tagged < revision) return undefined;
    }
    return undefined;
  }

  async function rules(c: Clients, listenerArn: string, absent: readonly string[] = []): Promise<Rule[]> {
    const all: Rule[] = [];
    let Marker: string | undefined;
    do {
      const page = await awsUnless('read the load balancer listener rules', absent, () =>
        c.elb.send(new elbApi.DescribeRulesCommand({ ListenerArn: listenerArn, Marker })),
      );
      all.push(...(page?.Rules ?? []));
      Marker = page?.NextMarker;
    } while (Marker);
    return all;
  }

  const ruleFor = (all: Rule[], host: string) =>
    all.find((r) =>
      r.Conditions?.some(
        (k) => k.Field === 'host-header' && (k.HostHeaderConfig?.Values ?? k.Values ?? []).some((v) => v === host),
      ),
    );

  async function targetGroupArn(c: Clients, name: string): Promise<string | undefined> {
    const out = await awsUnless('read the target group', TG_GONE, () =>
      c.elb.send(new elbApi.DescribeTargetGroupsCommand({ Names: [name] })),
    );
    return out?.TargetGroups?.[0]?.TargetGroupArn;
  }

  const tagsOf = (spec: { deploymentId: string; orgId: string }) => ({
    [CLOUD_LABELS.managed]: 'true',
    [CLOUD_LABELS.deployment]: spec.deploymentId,
    [CLOUD_LABELS.org]: spec.orgId,
  });

  return {
    provider: 'cloud_c_ecs_fargate',

    async verify(creds) {
      for (const region of creds.regions) {
        const c = clients(creds, region);
        const out = await aws(`read cluster ${creds.cluster} in ${region}`, () =>
          c.ecs.send(new ecsApi.DescribeClustersCommand({ clusters: [creds.cluster] })),
        );
        const cluster = out.clusters?.find((k) => k.status === 'ACTIVE');
        if (!cluster) {
          throw refused(
            `ECS has no active cluster "${creds.cluster}" in ${region} for these credentials.`,
            `Create the cluster in ${region} (or name the right one in "cluster"), or remove ${region} from "regions"; then save the credentials again.`,
          );
        }
      }
      const listenerRegion = creds.loadBalancer.listenerArn.split(':')[3] || creds.regions[0]!;
      const c = clients(creds, listenerRegion);
      const listener = await awsUnless(`read the load balancer listener in ${listenerRegion}`, LISTENER_GONE, () =>
        c.elb.send(new elbApi.DescribeListenersCommand({ ListenerArns: [creds.loadBalancer.listenerArn] })),
      );
      if (!listener?.Listeners?.length) {
        throw refused(
          `Elastic Load Balancing has no listener ${creds.loadBalancer.listenerArn}.`,
          'Name an existing Application Load Balancer listener in "loadBalancer.listenerArn"; then save the credentials again.',
        );
      }
    },

    async deployRevision(creds, spec) {
      const c = clients(creds, spec.region);
      const name = cloudServiceName(spec.deploymentId, 32);
      const host = hostOf(creds, name);
      const hide = [...Object.values(spec.env), creds.secretAccessKey];
      const size = fargateSize(spec.limits);
      if (!size) {
        throw refused(
          `No Fargate size has ${spec.limits.cpus} vCPU and ${spec.limits.memoryMb} MiB (at most 16 vCPU and 120 GiB).`,
          'Choose a plan whose limits Fargate can run.',
        );
      }
      const tags = tagsOf(spec);
      const ecsTags = Object.entries(tags).map(([key, value]) => ({ key, value }));
      const elbTags = Object.entries(tags).map(([Key, Value]) => ({ Key, Value }));

      // A previous attempt's group is ours already.
      await awsUnless('create the log group', ['ResourceAlreadyExistsException'], () =>
        c.logs.send(new logsApi.CreateLogGroupCommand({ logGroupName: logGroupOf(name), tags })),
      );

      const tg =
        (await targetGroupArn(c, name)) ??
        (
          await aws('create the target group', () =>
            c.elb.send(
              new elbApi.CreateTargetGroupCommand({
                Name: name,
                TargetType: 'ip',
                Protocol: 'HTTP',
                Port: spec.port,
                VpcId: creds.loadBalancer.vpcId,
                HealthCheckPath: '/',
                // An app that redirects or asks for a sign-in is up: only errors and silence are not.
                Matcher: { HttpCode: '200-499' },
                Tags: elbTags,
              }),
            ),
          )
        ).TargetGroups?.[0]?.TargetGroupArn;
      if (!tg) throw new Error(`Elastic Load Balancing returned no target group for ${name}`);

      const listener = creds.loadBalancer.listenerArn;
      const existing = await rules(c, listener);
      if (!ruleFor(existing, host)) {
        // Another deployment may take the same priority between this read and the write: PriorityInUse is retried.
        const taken = new Set(existing.map((r) => Number(r.Priority)).filter(Number.isInteger));
        let priority = 1;
        while (taken.has(priority)) priority++;
        await aws('create the load balancer rule', () =>
          c.elb.send(
            new elbApi.CreateRuleCommand({
              ListenerArn: listener,
              Priority: priority,
              Conditions: [{ Field: 'host-header', HostHeaderConfig: { Values: [host] } }],
              Actions: [{ Type: 'forward', TargetGroupArn: tg }],
              Tags: elbTags,
            }),
          ),
        );
      }

      const taskDefinition =
        (await registeredRevision(c, name, spec.revision)) ??
        (
          await aws(
            'register the task definition',
            () =>
              c.ecs.send(
                new ecsApi.RegisterTaskDefinitionCommand({
                  family: name,
                  requiresCompatibilities: ['FARGATE'],
                  networkMode: 'awsvpc',
                  cpu: size.cpu,
                  memory: size.memory,
                  executionRoleArn: creds.executionRoleArn,
                  containerDefinitions: [
                    {
                      name: CONTAINER,
                      image: spec.image,
                      essential: true,
                      portMappings: [{ containerPort: spec.port, protocol: 'tcp' }],
                      environment: Object.entries(spec.env).map(([k, value]) => ({ name: k, value })),
                      logConfiguration: {
                        logDriver: 'awslogs',
                        options: {
                          'awslogs-group': logGroupOf(name),
                          'awslogs-region': spec.region,
                          'awslogs-stream-prefix': STREAM_PREFIX,
                        },
                      },
                    },
                  ],
                  tags: [...ecsTags, { key: REVISION_TAG, value: String(spec.revision) }],
                }),
              ),
            hide,
          )
        ).taskDefinition?.taskDefinitionArn;
      if (!taskDefinition) throw new Error(`ECS returned no task definition for ${name}`);

      const service = await describeService(c, creds, name);
      if (service && service.status !== 'INACTIVE') {
        await aws('update the ECS service', () =>
          c.ecs.send(
            new ecsApi.UpdateServiceCommand({
              cluster: creds.cluster,
              service: name,
              taskDefinition,
              desiredCount: spec.replicas,
            }),
          ),
        );
      } else {
        await aws('create the ECS service', () =>
          c.ecs.send(
            new ecsApi.CreateServiceCommand({
              cluster: creds.cluster,
              serviceName: name,
              taskDefinition,
              desiredCount: spec.replicas,
              launchType: 'FARGATE',
              networkConfiguration: {
                awsvpcConfiguration: {
                  subnets: creds.subnets,
                  securityGroups: creds.securityGroups,
                  assignPublicIp: creds.assignPublicIp ? 'ENABLED' : 'DISABLED',
                },
              },
              loadBalancers: [{ targetGroupArn: tg, containerName: CONTAINER, containerPort: spec.port }],
              healthCheckGracePeriodSeconds: HEALTH_GRACE_S,
              // The circuit breaker marks a rollout whose tasks never get healthy FAILED (status reads it); the
              // workflow decides what to serve instead, so ECS does not roll back by itself.
              deploymentConfiguration: { deploymentCircuitBreaker: { enable: true, rollback: false } },
              propagateTags: 'SERVICE',
              enableECSManagedTags: true,
              tags: ecsTags,
            }),
          ),
        );
      }
      return { revision: spec.revision, name: taskDefinition };
    },

    async serveRevision(creds, target) {
      const c = clients(creds, target.region);
      const name = cloudServiceName(target.deploymentId, 32);
      const service = await describeService(c, creds, name);
      if (!service || service.status === 'INACTIVE') {
        throw refused(
          `Deployment ${target.deploymentId} has no ECS service to roll back (it was destroyed).`,
          'Deploy it again.',
        );
      }
      await aws('send traffic to the kept task definition', () =>
        c.ecs.send(
          new ecsApi.UpdateServiceCommand({
            cluster: creds.cluster,
            service: name,
            taskDefinition: target.revision.name,
            desiredCount: target.replicas,
          }),
        ),
      );
    },

    async setReplicas(creds, target) {
      const c = clients(creds, target.region);
      const name = cloudServiceName(target.deploymentId, 32);
      const service = await describeService(c, creds, name);
      if (!service || service.status === 'INACTIVE') {
        throw refused(
          `Deployment ${target.deploymentId} has no ECS service to scale (it was destroyed).`,
          'Deploy it again.',
        );
      }
      if (service.desiredCount === target.replicas) return;
      await aws('change the number of tasks', () =>
        c.ecs.send(
          new ecsApi.UpdateServiceCommand({ cluster: creds.cluster, service: name, desiredCount: target.replicas }),
        ),
      );
    },

    async status(creds, target) {
      const c = clients(creds, target.region);
      const name = cloudServiceName(target.deploymentId, 32);
      const service = await describeService(c, creds, name);
      const arns = new Set(
        [service?.taskDefinition, ...(service?.deployments ?? []).map((d) => d.taskDefinition)].filter(
          (a): a is string => !!a,
        ),
      );
      const revisions = new Map<string, CloudRevision>();
      if (service && service.status !== 'INACTIVE') {
        for (const arn of arns) {
          const revision = await revisionTag(c, arn);
          if (revision !== undefined) revisions.set(arn, { revision, name: arn });
        }
      }
      return serviceStatus(
        service,
        (arn) => (arn ? (revisions.get(arn) ?? null) : null),
        urlOf(creds, name),
        now().toISOString(),
      );
    },

    async logs(creds, target, query) {
      return readLogs(clients(creds, target.region), cloudServiceName(target.deploymentId, 32), query);
    },

    async destroy(creds, target) {
      const c = clients(creds, target.region);
      const name = cloudServiceName(target.deploymentId, 32);
      const removed: string[] = [];

      const service = await describeService(c, creds, name);
      if (service && service.status !== 'INACTIVE') {
        if ((service.desiredCount ?? 0) > 0) {
          await aws('stop the ECS service', () =>
            c.ecs.send(new ecsApi.UpdateServiceCommand({ cluster: creds.cluster, service: name, desiredCount: 0 })),
          );
        }
        await awsUnless('delete the ECS service', ['ServiceNotFoundException', 'ServiceNotActiveException'], () =>
          c.ecs.send(new ecsApi.DeleteServiceCommand({ cluster: creds.cluster, service: name, force: true })),
        );
        removed.push(`ecs service ${service.serviceArn ?? name}`);
      }

      for (const arn of await familyArns(c, name, 'ACTIVE')) {
        await aws('deregister a task definition', () =>
          c.ecs.send(new ecsApi.DeregisterTaskDefinitionCommand({ taskDefinition: arn })),
        );
        removed.push(`ecs task definition ${arn}`);
      }
      // Deregistered revisions stay listed (INACTIVE) until deleted; deleting is asynchronous on AWS's side.
      const inactive = await familyArns(c, name, 'INACTIVE');
      for (let i = 0; i < inactive.length; i += 10) {
        await aws('delete task definitions', () =>
          c.ecs.send(new ecsApi.DeleteTaskDefinitionsCommand({ taskDefinitions: inactive.slice(i, i + 10) })),
        );
      }

      // A listener removed by its owner took its rules along.
      const rule = ruleFor(await rules(c, creds.loadBalancer.listenerArn, LISTENER_GONE), hostOf(creds, name));
      if (rule?.RuleArn) {
        await awsUnless('delete the load balancer rule', ['RuleNotFoundException', 'RuleNotFound'], () =>
          c.elb.send(new elbApi.DeleteRuleCommand({ RuleArn: rule.RuleArn })),
        );
        removed.push(`load balancer rule ${rule.RuleArn}`);
      }

      const tg = await targetGroupArn(c, name);
      if (tg) {
        const tags = await aws('read the target group tags', () =>
          c.elb.send(new elbApi.DescribeTagsCommand({ ResourceArns: [tg] })),
        );
        const ours = tags.TagDescriptions?.[0]?.Tags?.some(
          (t) => t.Key === CLOUD_LABELS.deployment && t.Value === target.deploymentId,
        );
        // A target group of that name without our tag is someone else's: left alone.
        if (ours) {
          await awsUnless('delete the target group', TG_GONE, () =>
            c.elb.send(new elbApi.DeleteTargetGroupCommand({ TargetGroupArn: tg })),
          );
          removed.push(`target group ${tg}`);
        }
      }

      const deleted = await awsUnless('delete the log group', ['ResourceNotFoundException'], () =>
        c.logs.send(new logsApi.DeleteLogGroupCommand({ logGroupName: logGroupOf(name) })).then(() => true),
      );
      if (deleted) removed.push(`log group ${logGroupOf(name)}`);
      return removed;
    },

    async registryAuth(creds) {
      // An ECR repository's host names its region: <account>.dkr.ecr.<region>.amazonaws.com.
      const fromHost = /\.dkr\.ecr\.([a-z0-9-]+)\.amazonaws\.com/.exec(creds.registry?.repository ?? '')?.[1];
      const c = clients(creds, fromHost ?? creds.regions[0]!);
      const out = await aws('sign in to ECR', () => c.ecr.send(new GetAuthorizationTokenCommand({})));
      const token = out.authorizationData?.[0]?.authorizationToken;
      const [username, password] = Buffer.from(token ?? '', 'base64')
        .toString('utf8')
        .split(/:(.*)/s);
      if (!username || !password) throw new Error('ECR returned no authorization token');
      return { username, password };
    },

    async listManaged(creds) {
      const found: ManagedResource[] = [];
      for (const region of creds.regions)
        found.push(...(await managedResources(clients(creds, region), creds, region)));
      return found;
    },
  };
}

const sinceMs = (since: LogQuery['since']): number | undefined => {
  if (since === undefined) return undefined;
  const ms = typeof since === 'number' ? since * 1000 : Date.parse(since);
  if (!Number.isFinite(ms) || ms < 0) throw new TypeError('since must be an ISO time or epoch seconds');
  return Math.floor(ms);
};

/** The newest `tail` lines of each task's stream (of one task's, with `instance`), at or after `since`, oldest first. */
async function readLogs(c: Clients, name: string, query: LogQuery): Promise<ProviderLogLine[]> {
  if (!Number.isFinite(query.tail)) throw new TypeError('tail must be a number of lines');
  const tail = Math.max(0, Math.min(MAX_TAIL, Math.floor(query.tail)));
  const startTime = sinceMs(query.since);
  if (tail === 0) return [];
  const group = logGroupOf(name);
  let streams: string[];
  if (query.instance !== undefined) {
    streams = [instanceStream(query.instance)];
  } else {
    const out = await awsUnless('list the log streams', ['ResourceNotFoundException'], () =>
      c.logs.send(
        new logsApi.DescribeLogStreamsCommand({
          logGroupName: group,
          orderBy: 'LastEventTime',
          descending: true,
          limit: MAX_STREAMS,
        }),
      ),
    );
    streams = (out?.logStreams ?? [])
      .filter((s) => startTime === undefined || (s.lastEventTimestamp ?? Infinity) >= startTime)
      .map((s) => s.logStreamName)
      .filter((s): s is string => !!s && s.startsWith(`${STREAM_PREFIX}/${CONTAINER}/`));
  }
  const lines: ProviderLogLine[] = [];
  for (const stream of streams) {
    const events: OutputLogEvent[] = [];
    let nextToken: string | undefined;
    // Read backwards from the end: each page holds older events, until `tail` are in hand or the stream begins.
    for (;;) {
      const page = await awsUnless('read the logs', ['ResourceNotFoundException'], () =>
        c.logs.send(
          new logsApi.GetLogEventsCommand({
            logGroupName: group,
            logStreamName: stream,
            startFromHead: false,
            limit: Math.min(tail - events.length, MAX_TAIL),
            ...(startTime !== undefined ? { startTime } : {}),
            ...(nextToken ? { nextToken } : {}),
          }),
        ),
      );
      events.unshift(...(page?.events ?? []));
      // CloudWatch returns the same token again at the start of the stream.
      if (!page?.events?.length || !page.nextBackwardToken || page.nextBackwardToken === nextToken) break;
      if (events.length >= tail) break;
      nextToken = page.nextBackwardToken;
    }
    const instance = stream.split('/').pop()!;
    for (const e of events.slice(-tail)) {
      lines.push({
        timestamp: new Date(e.timestamp ?? 0).toISOString(),
        // awslogs sends stdout and stderr to one stream without saying which.
        stream: 'stdout',
        message: e.message ?? '',
        instance,
      });
    }
  }
  return lines.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
}
