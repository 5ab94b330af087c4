import type Docker from 'dockerode';

import { containerIps, instanceNameOf, selectInstances, stoppedByUs } from '@shared/engine/instances';

/** The parts of an engine's inspect answer these read; the rest of the type is irrelevant here. */
const inspected = (over: {
  running?: boolean;
  restarting?: boolean;
  restart?: string;
  networks?: Record<string, { IPAddress: string }>;
  name?: string;
}) =>
  ({
    Name: over.name ?? '/slipway-d1-1-0',
    State: { Running: over.running ?? false, Restarting: over.restarting ?? false },
    HostConfig: over.restart === undefined ? {} : { RestartPolicy: { Name: over.restart } },
    NetworkSettings: { Networks: over.networks },
  }) as unknown as Docker.ContainerInspectInfo;

describe('instances on the engine', () => {
  it('counts as stopped by us only a container that is down and that nothing will restart', () => {
    expect(stoppedByUs(inspected({ running: false, restart: 'no' }))).toBe(true);
    expect(stoppedByUs(inspected({ running: false }))).toBe(true);
    expect(stoppedByUs(inspected({ running: false, restart: '' }))).toBe(false);
    expect(stoppedByUs(inspected({ running: false, restart: 'on-failure' }))).toBe(false);
    expect(stoppedByUs(inspected({ running: false, restart: 'unless-stopped' }))).toBe(false);
    expect(stoppedByUs(inspected({ running: true, restart: 'no' }))).toBe(false);
    expect(stoppedByUs(inspected({ restarting: true, restart: 'no' }))).toBe(false);
  });

  it("lists the container's addresses on its networks, skipping networks that gave it none", () => {
    const info = inspected({
      networks: {
        'slipway-org1': { IPAddress: '172.20.0.5' },
        none: { IPAddress: '' },
        other: { IPAddress: '10.0.0.2' },
      },
    });
    expect(containerIps(info)).toEqual(['172.20.0.5', '10.0.0.2']);
    expect(containerIps(inspected({}))).toEqual([]);
  });

  it("names an instance by the container's name without the engine's leading slash", () => {
    expect(instanceNameOf(inspected({ name: '/slipway-d1-2-1' }))).toBe('slipway-d1-2-1');
    expect(instanceNameOf(inspected({ name: 'already-bare' }))).toBe('already-bare');
  });

  it.each([
    [{ revision: -1 }, 'revision must be a non-negative integer'],
    [{ revision: 1.5 }, 'revision must be a non-negative integer'],
    [{ exceptRevision: Number.NaN }, 'exceptRevision must be a non-negative integer'],
    [{ replicasFrom: 2 ** 53 }, 'replicasFrom must be a non-negative integer'],
  ])('refuses the filter %j before it reaches the engine', async (filter, message) => {
    // Never used: the refusal comes first, so no engine is needed to see it.
    const noEngine = undefined as unknown as Docker;
    await expect(selectInstances(noEngine, 'd1', filter)).rejects.toThrow(new TypeError(message));
  });
});
