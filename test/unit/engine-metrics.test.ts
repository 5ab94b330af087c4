import { type EngineStats, metricsFrom } from '@shared/engine/observe';

/** Stats answers shaped as the engine sends them on cgroup v1 and v2 hosts; the figures are docker stats's. */
const base = {
  read: '2026-11-23T14:00:00.000000000Z',
  pids_stats: { current: 3 },
  networks: { eth0: { rx_bytes: 1500, tx_bytes: 700 }, eth1: { rx_bytes: 500, tx_bytes: 300 } },
};

describe('metricsFrom (docker stats arithmetic)', () => {
  it('cgroup v1: CPU from the delta to precpu over the system delta, memory without total_inactive_file', () => {
    const stats: EngineStats = {
      ...base,
      cpu_stats: { cpu_usage: { total_usage: 300_000_000, percpu_usage: [1, 2] }, system_cpu_usage: 20_000_000_000 },
      precpu_stats: { cpu_usage: { total_usage: 100_000_000 }, system_cpu_usage: 18_000_000_000 },
      memory_stats: { usage: 10_000_000, limit: 268_435_456, stats: { total_inactive_file: 2_000_000 } },
      blkio_stats: {
        io_service_bytes_recursive: [
          { op: 'Read', value: 4096 },
          { op: 'Write', value: 8192 },
          { op: 'Total', value: 12288 },
        ],
      },
    };
    expect(metricsFrom(stats)).toEqual({
      // 0.2e9 / 2e9 × 2 CPUs (from percpu_usage, no online_cpus) × 100
      cpuPercent: 20,
      onlineCpus: 2,
      memoryBytes: 8_000_000,
      memoryLimitBytes: 268_435_456,
      memoryPercent: 2.98,
      networkRxBytes: 2000,
      networkTxBytes: 1000,
      blockReadBytes: 4096,
      blockWriteBytes: 8192,
      pids: 3,
      at: base.read,
    });
  });

  it('cgroup v2: online_cpus, inactive_file and lower-case block I/O ops; no CPU delta reads as 0 %', () => {
    const stats: EngineStats = {
      ...base,
      cpu_stats: { cpu_usage: { total_usage: 5 }, system_cpu_usage: 10, online_cpus: 4 },
      precpu_stats: { cpu_usage: { total_usage: 5 }, system_cpu_usage: 5 },
      memory_stats: { usage: 5_000_000, limit: 1_000_000_000, stats: { inactive_file: 1_000_000 } },
      blkio_stats: {
        io_service_bytes_recursive: [
          { op: 'read', value: 100 },
          { op: 'write', value: 50 },
        ],
      },
    };
    expect(metricsFrom(stats)).toMatchObject({
      cpuPercent: 0,
      onlineCpus: 4,
      memoryBytes: 4_000_000,
      memoryPercent: 0.4,
      blockReadBytes: 100,
      blockWriteBytes: 50,
    });
  });
});
