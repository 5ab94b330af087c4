import type Docker from 'dockerode';

import { toInstance, toStatus } from '@activities/providers/engine-instances';
import { LABELS } from '@shared/constants';

const at = { publicHost: 'apps.example.test', bindIp: '0.0.0.0' };
const NEVER = '0001-01-01T00:00:00Z';

/** The parts of an engine's inspect answer these read. */
const container = (over: { running: boolean; port?: number; finishedAt?: string }) => ({
  revision: 3,
  replica: 1,
  info: {
    Id: 'c0ffee',
    Name: '/slipway-d1-r3-1',
    Image: 'sha256:abc',
    RestartCount: 2,
    Config: { Labels: { [LABELS.deploymentId]: 'd1' } },
    State: {
      Running: over.running,
      Status: over.running ? 'running' : 'exited',
      StartedAt: '2030-01-01T00:00:00Z',
      FinishedAt: over.finishedAt ?? NEVER,
      ExitCode: 137,
      OOMKilled: false,
    },
    NetworkSettings: { Ports: over.port ? { '8080/tcp': [{ HostIp: '0.0.0.0', HostPort: String(over.port) }] } : {} },
  } as unknown as Docker.ContainerInspectInfo,
});

const identity = {
  id: 'c0ffee',
  name: 'slipway-d1-r3-1',
  deploymentId: 'd1',
  revision: 3,
  replica: 1,
  imageId: 'sha256:abc',
};

describe('an engine_local instance as the provider reports it', () => {
  it('started: who it is and where its published port is reached', () => {
    expect(toInstance(container({ running: true, port: 40001 }), at)).toEqual({
      ...identity,
      upstream: '127.0.0.1:40001',
      url: 'http://apps.example.test:40001',
      hostPort: 40001,
    });
  });

  it('started with no published port is an error, never an instance with no address', () => {
    expect(() => toInstance(container({ running: true }), at)).toThrow('runs with no published port');
  });

  it('listed while running: the same identity and address, with its state', () => {
    expect(toStatus(container({ running: true, port: 40001 }), at)).toEqual({
      ...identity,
      state: 'running',
      restarts: 2,
      startedAt: '2030-01-01T00:00:00Z',
      oomKilled: false,
      upstream: '127.0.0.1:40001',
      url: 'http://apps.example.test:40001',
      hostPort: 40001,
    });
  });

  it('listed while stopped: the same identity, its exit, and no address', () => {
    const stopped = container({ running: false, port: 40001, finishedAt: '2030-01-02T00:00:00Z' });
    expect(toStatus(stopped, at)).toEqual({
      ...identity,
      state: 'exited',
      restarts: 2,
      startedAt: '2030-01-01T00:00:00Z',
      finishedAt: '2030-01-02T00:00:00Z',
      exitCode: 137,
      oomKilled: false,
      upstream: null,
      url: null,
      hostPort: null,
    });
  });
});
