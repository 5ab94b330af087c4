import { bucketSamples, type MetricsSample } from '@shared/deployments/metrics-store';

const sample = (
  instance: string,
  replica: number,
  atS: number,
  cpuPercent: number,
  memoryBytes: number,
): MetricsSample => ({
  deploymentId: 'd',
  orgId: 'o',
  instance,
  revision: 1,
  replica,
  at: new Date(Date.UTC(2026, 10, 23, 12, 0, atS)),
  cpuPercent,
  memoryBytes,
  memoryLimitBytes: 1000,
  networkRxBytes: atS * 10,
  networkTxBytes: 0,
  blockReadBytes: 0,
  blockWriteBytes: 0,
  pids: 1,
});

describe('metrics history buckets', () => {
  const from = new Date(Date.UTC(2026, 10, 23, 12, 0, 0));

  it('averages each instance’s samples per step from `from`, leaving empty steps out, replicas in order', () => {
    const series = bucketSamples(
      [
        sample('b', 1, 1, 10, 100),
        sample('a', 0, 2, 1.005, 300),
        sample('a', 0, 14, 2, 301),
        sample('a', 0, 15, 40, 500),
        sample('a', 0, 59, 50, 700),
      ],
      from,
      15,
    );
    expect(series.map((s) => [s.instance, s.replica])).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
    expect(series[0]!.points).toEqual([
      expect.objectContaining({
        at: '2026-11-23T12:00:00.000Z',
        samples: 2,
        cpuPercent: 1.5,
        memoryBytes: 301,
        networkRxBytes: 80,
      }),
      expect.objectContaining({ at: '2026-11-23T12:00:15.000Z', samples: 1, cpuPercent: 40, memoryBytes: 500 }),
      // 12:00:30 had no sample: no point, rather than a zero that reads as idle.
      expect.objectContaining({ at: '2026-11-23T12:00:45.000Z', samples: 1, cpuPercent: 50, memoryBytes: 700 }),
    ]);
    expect(series[1]!.points).toEqual([
      expect.objectContaining({ samples: 1, cpuPercent: 10, memoryLimitBytes: 1000 }),
    ]);
  });

  it('answers no series for no samples', () => {
    expect(bucketSamples([], from, 60)).toEqual([]);
  });
});
