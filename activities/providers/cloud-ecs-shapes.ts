import type { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import type { ECRClient } from '@aws-sdk/client-ecr';
import type { ECSClient, Service } from '@aws-sdk/client-ecs';
import type { ElasticLoadBalancingV2Client } from '@aws-sdk/client-elastic-load-balancing-v2';
import type { ApplicationFailure } from '@temporalio/common';

import { CLOUD_FAILURES, cloudFailure, type CloudRevision, type CloudServiceStatus } from './cloud';

/**
 * The pure half of the ECS adapter (cloud-ecs.ts): Fargate sizes, the AWS errors it refuses or retries, and the
 * service's state in CloudServiceStatus terms. Nothing here calls AWS.
 */

const PROVIDER = 'cloud_c_ecs_fargate' as const;

/** The SDK clients of one set of credentials in one region. */
export interface EcsClients {
  ecs: ECSClient;
  elb: ElasticLoadBalancingV2Client;
  logs: CloudWatchLogsClient;
  ecr: ECRClient;
}

/** The tag on each task definition revision saying which of our releases it is: a retry finds it by this. */
export const REVISION_TAG = 'slipway-revision';

/** Fargate's CPU sizes (units, 1024 = one vCPU) and the memory each allows, in MiB (AWS's "Task size" table). */
const FARGATE_SIZES: { cpu: number; memory: number[] }[] = [
  { cpu: 256, memory: [512, 1024, 2048] },
  { cpu: 512, memory: steps(1024, 4096, 1024) },
  { cpu: 1024, memory: steps(2048, 8192, 1024) },
  { cpu: 2048, memory: steps(4096, 16384, 1024) },
  { cpu: 4096, memory: steps(8192, 30720, 1024) },
  { cpu: 8192, memory: steps(16384, 61440, 4096) },
  { cpu: 16384, memory: steps(32768, 122880, 8192) },
];

function steps(from: number, to: number, by: number): number[] {
  const out: number[] = [];
  for (let m = from; m <= to; m += by) out.push(m);
  return out;
}

/** The smallest Fargate size with at least the plan's CPUs and memory; undefined when none is that large. */
export function fargateSize(limits: { memoryMb: number; cpus: number }): { cpu: string; memory: string } | undefined {
  const units = Math.ceil(Math.max(0, limits.cpus) * 1024);
  for (const size of FARGATE_SIZES) {
    if (size.cpu < units) continue;
    const memory = size.memory.find((m) => m >= limits.memoryMb);
    if (memory !== undefined) return { cpu: String(size.cpu), memory: String(memory) };
  }
  return undefined;
}

/** What AWS says when the keys, the session or the role's permissions do not allow the call (any of its APIs). */
const AUTH_ERRORS = new Set([
  'UnrecognizedClientException',
  'InvalidClientTokenId',
  'InvalidSignatureException',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'MissingAuthenticationToken',
  'ExpiredToken',
  'ExpiredTokenException',
  'AccessDenied',
  'AccessDeniedException',
  'UnauthorizedOperation',
  'AuthFailure',
]);

/**
 * Client errors that can pass by themselves, so Temporal retries them: throttling (after the SDK's own retries), a
 * listener rule priority another deployment took between our read and our write (the retry picks another), a resource
 * still being released by a previous call.
 */
const TRANSIENT_ERRORS = new Set([
  'ThrottlingException',
  'Throttling',
  'TooManyRequestsException',
  'RequestLimitExceeded',
  'PriorityInUseException',
  'PriorityInUse',
  'ResourceInUseException',
  'ResourceInUse',
  'ConcurrentModificationException',
  'OperationAbortedException',
  'PriorRequestNotCompleteException',
  'UpdateInProgressException',
]);

interface AwsError {
  name: string;
  message: string;
  $fault?: 'client' | 'server';
  $metadata?: { httpStatusCode?: number };
}

const isAwsError = (err: unknown): err is AwsError =>
  err instanceof Error && typeof (err as { $fault?: unknown }).$fault === 'string';

/** AWS's own words, without any value the caller asked us never to show (env values, the secret key). */
function quoted(message: string, hide: readonly string[]): string {
  let text = message.replace(/\s+/g, ' ').trim().slice(0, 500);
  for (const secret of hide) if (secret.length >= 4) text = text.split(secret).join('***');
  return `"${text}"`;
}

/**
 * A CloudFailure for an AWS error retrying cannot fix: refused keys or permissions (credentialsRefused), a request
 * AWS refuses for what it asks (requestRefused). Anything else (throttling, 5xx, a network error) is returned as is,
 * so the caller throws it and Temporal retries after the SDK's own retries.
 */
export function awsFailure(err: unknown, doing: string, hide: readonly string[] = []): unknown {
  if (!isAwsError(err)) return err;
  if (AUTH_ERRORS.has(err.name)) {
    return cloudFailure(CLOUD_FAILURES.credentialsRefused, {
      provider: PROVIDER,
      message: `AWS refused the credentials to ${doing}: ${err.name} ${quoted(err.message, hide)}`,
      hint:
        'Check the access key (or the role and its external ID), that it has not expired, and that its IAM policy ' +
        'allows ECS, Elastic Load Balancing, CloudWatch Logs and iam:PassRole on the execution role; then save the ' +
        'credentials again.',
    });
  }
  if (TRANSIENT_ERRORS.has(err.name) || err.$fault === 'server') return err;
  const status = err.$metadata?.httpStatusCode;
  if (status === 429 || (status !== undefined && status >= 500)) return err;
  return cloudFailure(CLOUD_FAILURES.requestRefused, {
    provider: PROVIDER,
    message: `AWS refused to ${doing}: ${err.name} ${quoted(err.message, hide)}`,
    hint:
      'Check the credentials’ cluster, subnets, security groups, execution role and load balancer listener in the ' +
      'region, and the plan’s size against Fargate’s; then deploy again.',
  });
}

/** Runs an AWS call, throwing awsFailure's CloudFailure or the original error. */
export async function aws<T>(doing: string, call: () => Promise<T>, hide: readonly string[] = []): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw awsFailure(err, doing, hide);
  }
}

/** Like `aws`, but AWS saying the thing is not there (one of `absent`, AWS's error names) reads as undefined. */
export async function awsUnless<T>(
  doing: string,
  absent: readonly string[],
  call: () => Promise<T>,
): Promise<T | undefined> {
  try {
    return await call();
  } catch (err) {
    if (isNotFound(err, ...absent)) return undefined;
    throw awsFailure(err, doing);
  }
}

/** Whether `err` is AWS saying the thing asked for is not there (the callers treat it as already gone). */
export const isNotFound = (err: unknown, ...names: string[]) => isAwsError(err) && names.includes(err.name);

/** A CloudFailure (requestRefused) in our words, for what the credentials name but AWS does not have. */
export function refused(message: string, hint: string): ApplicationFailure {
  return cloudFailure(CLOUD_FAILURES.requestRefused, { provider: PROVIDER, message, hint });
}

/**
 * The service as CloudServiceStatus. ECS keeps one deployment per task definition being rolled out: the PRIMARY one
 * is what the service converges on (the service's own taskDefinition), and its rolloutState (with the deployment
 * circuit breaker) says whether it completed or failed; while it rolls out, the ACTIVE one still takes traffic.
 * `revisionOf` names our release of a task definition ARN (null for one we did not tag).
 */
export function serviceStatus(
  service: Service | undefined,
  revisionOf: (taskDefinitionArn: string | undefined) => CloudRevision | null,
  url: string,
  at: string,
): CloudServiceStatus {
  if (!service || service.status === 'INACTIVE') {
    return { phase: 'absent', serving: null, desiredReplicas: 0, runningReplicas: 0, url: null, at };
  }
  const desired = service.desiredCount ?? 0;
  const running = service.runningCount ?? 0;
  const primary = service.deployments?.find((d) => d.status === 'PRIMARY');
  const previous = service.deployments?.find((d) => d.status === 'ACTIVE');
  const done = primary === undefined || primary.rolloutState === 'COMPLETED';
  const serving = done ? revisionOf(service.taskDefinition) : revisionOf(previous?.taskDefinition);
  const base = { serving, desiredReplicas: desired, runningReplicas: running, url, at };
  if (primary?.rolloutState === 'FAILED') {
    const why = primary.rolloutStateReason ? ` AWS says: ${quoted(primary.rolloutStateReason, [])}` : '';
    return {
      ...base,
      phase: 'failed',
      message: `The new task definition's tasks did not become healthy, so ECS stopped rolling it out.${why}`,
    };
  }
  if (desired === 0) return { ...base, phase: 'stopped', message: 'Stopped: the service runs no tasks.' };
  if (done && running >= desired) return { ...base, phase: 'serving' };
  const rollout = primary?.rolloutState ? `, rollout ${primary.rolloutState.toLowerCase().replace('_', ' ')}` : '';
  return { ...base, phase: 'deploying', message: `${running} of ${desired} tasks running${rollout}.` };
}
