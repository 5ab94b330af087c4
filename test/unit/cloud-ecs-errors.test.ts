import { ThrottlingException } from '@aws-sdk/client-cloudwatch-logs';
import {
  AccessDeniedException,
  ClientException,
  ECSServiceException,
  InvalidParameterException,
  ServerException,
  type Service,
} from '@aws-sdk/client-ecs';

import { CLOUD_FAILURES } from '@activities/providers/cloud';
import { awsFailure, fargateSize, serviceStatus } from '@activities/providers/cloud-ecs-shapes';

const meta = { $metadata: { httpStatusCode: 400 } };
const AT = '2026-01-01T00:00:00.000Z';
const URL = 'https://s1.apps.example.com';
const rev = (arn: string | undefined) => (arn ? { revision: Number(arn.split(':').pop()), name: arn } : null);

describe('ECS adapter: AWS errors', () => {
  test.each([
    ['UnrecognizedClientException', 'client'],
    ['InvalidClientTokenId', 'client'],
    ['ExpiredTokenException', 'client'],
  ] as const)('%s (the SDK has no class for it) refuses the credentials', (name, fault) => {
    const err = new ECSServiceException({ name, $fault: fault, ...meta, message: 'The security token is invalid.' });
    expect(awsFailure(err, 'read cluster apps')).toMatchObject({
      type: CLOUD_FAILURES.credentialsRefused,
      nonRetryable: true,
      message: expect.stringContaining('"The security token is invalid."'),
    });
  });

  test('a missing permission refuses the credentials, with what to do', () => {
    const err = new AccessDeniedException({ ...meta, message: 'not authorized to perform ecs:CreateService' });
    const failure = awsFailure(err, 'create the ECS service') as { type: string; details: { hint: string }[] };
    expect(failure.type).toBe(CLOUD_FAILURES.credentialsRefused);
    expect(failure.details[0]!.hint).toMatch(/IAM policy/);
  });

  test('a request ECS refuses is refused, quoting it without env values or the secret', () => {
    const err = new InvalidParameterException({
      ...meta,
      message: 'Container definition env value s3cret-token is invalid for key wJalrXUtnFEMI',
    });
    const failure = awsFailure(err, 'register the task definition', ['s3cret-token', 'wJalrXUtnFEMI']) as Error & {
      type: string;
    };
    expect(failure.type).toBe(CLOUD_FAILURES.requestRefused);
    expect(failure.message).toContain('InvalidParameterException');
    expect(failure.message).not.toMatch(/s3cret-token|wJalrXUtnFEMI/);
    expect(awsFailure(new ClientException({ ...meta, message: 'bad image' }), 'x')).toMatchObject({
      type: CLOUD_FAILURES.requestRefused,
    });
  });

  test('throttling, server errors and network errors are thrown as they are, for Temporal to retry', () => {
    const throttled = new ThrottlingException({ ...meta, message: 'Rate exceeded' });
    const server = new ServerException({ $metadata: { httpStatusCode: 500 }, message: 'oops' });
    const network = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    for (const err of [throttled, server, network]) expect(awsFailure(err, 'x')).toBe(err);
  });
});

describe('ECS adapter: Fargate sizes', () => {
  test.each([
    [
      { cpus: 0.25, memoryMb: 512 },
      { cpu: '256', memory: '512' },
    ],
    [
      { cpus: 0.3, memoryMb: 600 },
      { cpu: '512', memory: '1024' },
    ],
    [
      { cpus: 0.25, memoryMb: 3000 },
      { cpu: '512', memory: '3072' },
    ],
    [
      { cpus: 1, memoryMb: 256 },
      { cpu: '1024', memory: '2048' },
    ],
    [
      { cpus: 16, memoryMb: 122880 },
      { cpu: '16384', memory: '122880' },
    ],
  ])('%j rounds up to %j', (limits, size) => expect(fargateSize(limits)).toEqual(size));

  test('more than Fargate sells has no size', () => {
    expect(fargateSize({ cpus: 17, memoryMb: 512 })).toBeUndefined();
    expect(fargateSize({ cpus: 1, memoryMb: 200_000 })).toBeUndefined();
  });
});

describe('ECS adapter: service status', () => {
  const service = (s: Partial<Service>): Service => ({
    status: 'ACTIVE',
    taskDefinition: 'arn:td/s1:2',
    desiredCount: 2,
    runningCount: 2,
    ...s,
  });

  test('a failed rollout is failed, quoting ECS, with the previous revision still serving', () => {
    const status = serviceStatus(
      service({
        deployments: [
          {
            status: 'PRIMARY',
            taskDefinition: 'arn:td/s1:2',
            rolloutState: 'FAILED',
            rolloutStateReason: 'tasks failed to start',
          },
          { status: 'ACTIVE', taskDefinition: 'arn:td/s1:1' },
        ],
      }),
      rev,
      URL,
      AT,
    );
    expect(status).toMatchObject({ phase: 'failed', serving: { revision: 1 } });
    expect(status.message).toContain('"tasks failed to start"');
  });

  test('a completed rollout with every task running is serving its task definition', () => {
    const status = serviceStatus(
      service({ deployments: [{ status: 'PRIMARY', taskDefinition: 'arn:td/s1:2', rolloutState: 'COMPLETED' }] }),
      rev,
      URL,
      AT,
    );
    expect(status).toEqual({
      phase: 'serving',
      serving: { revision: 2, name: 'arn:td/s1:2' },
      desiredReplicas: 2,
      runningReplicas: 2,
      url: URL,
      at: AT,
    });
  });

  test('a rollout in progress is deploying while the previous revision serves', () => {
    const status = serviceStatus(
      service({
        runningCount: 1,
        deployments: [
          { status: 'PRIMARY', taskDefinition: 'arn:td/s1:2', rolloutState: 'IN_PROGRESS' },
          { status: 'ACTIVE', taskDefinition: 'arn:td/s1:1' },
        ],
      }),
      rev,
      URL,
      AT,
    );
    expect(status).toMatchObject({ phase: 'deploying', serving: { revision: 1 }, runningReplicas: 1 });
  });

  test('no tasks wanted is stopped; no service, or an inactive one, is absent', () => {
    expect(serviceStatus(service({ desiredCount: 0, runningCount: 0 }), rev, URL, AT).phase).toBe('stopped');
    expect(serviceStatus(undefined, rev, URL, AT)).toMatchObject({ phase: 'absent', url: null });
    expect(serviceStatus(service({ status: 'INACTIVE' }), rev, URL, AT).phase).toBe('absent');
  });
});
