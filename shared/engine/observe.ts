import type Docker from 'dockerode';

import {
  containerIps,
  type InstanceFilter,
  instanceNameOf,
  type InstanceState,
  type Selected,
  selectInstances,
  stoppedByUs,
} from './instances';
import { readContainerLogs } from './logs';
import { type HttpProbe, httpProbe } from './probe';

/**
 * What a deployment's instances are doing, read from the engine: health (state, restarts, an HTTP probe), resource
 * use as `docker stats` shows it, and their output. Read-only, so the api serves it directly and the worker's
 * provider (engine-local.ts) answers its interface with the same code.
 */

export interface InstanceHealth {
  name: string;
  revision: number;
  replica: number;
  state: InstanceState;
  restarts: number;
  startedAt?: string;
  exitCode?: number;
  oomKilled: boolean;
  probe: HttpProbe;
}

/**
 * healthy: at least one instance and every instance running with an ok probe; degraded: some but not all;
 * unhealthy: none ok while some is meant to run (crash-looping, not answering); stopped: no instance or all of
 * them exited without the restart policy bringing them back (stopped by us).
 */
export type OverallHealth = 'healthy' | 'degraded' | 'unhealthy' | 'stopped';

export interface DeploymentHealth {
  overall: OverallHealth;
  instances: InstanceHealth[];
  at: string;
}

/** Computed as `docker stats` does, from one engine stats read (which carries the previous CPU sample). */
export interface InstanceMetrics {
  name: string;
  revision: number;
  replica: number;
  /** Percent of one CPU (200 = two full CPUs), as `docker stats` shows it. */
  cpuPercent: number;
  onlineCpus: number;
  /** Usage without the page cache, as `docker stats` shows it. */
  memoryBytes: number;
  /** The container's memory limit (the plan's). */
  memoryLimitBytes: number;
  memoryPercent: number;
  networkRxBytes: number;
  networkTxBytes: number;
  blockReadBytes: number;
  blockWriteBytes: number;
  pids: number;
  /** ISO time of the engine's sample. */
  at: string;
}

export interface ProviderLogLine {
  timestamp: string;
  stream: 'stdout' | 'stderr';
  message: string;
  /** The instance name the line came from. */
  instance: string;
}

export interface LogQuery {
  /** Lines per instance, at most 10 000. */
  tail: number;
  /** ISO time or epoch seconds: only lines at or after it. */
  since?: string | number;
  /** One instance's name; absent: all instances of the deployment, merged by time. */
  instance?: string;
}

/** The fields of the engine's stats answer (GET /containers/{id}/stats?stream=false) that `docker stats` reads. */
export interface EngineStats {
  read: string;
  pids_stats?: { current?: number };
  cpu_stats: {
    cpu_usage: { total_usage: number; percpu_usage?: number[] };
    system_cpu_usage?: number;
    online_cpus?: number;
  };
  precpu_stats: { cpu_usage: { total_usage: number }; system_cpu_usage?: number };
  memory_stats: { usage?: number; limit?: number; stats?: Record<string, number> };
  networks?: Record<string, { rx_bytes: number; tx_bytes: number }>;
  blkio_stats?: { io_service_bytes_recursive?: { op: string; value: number }[] | null };
}

/**
 * What `docker stats` shows, computed as its CLI does (cli/command/container/stats_helpers.go): CPU from the
 * delta to the previous sample the engine sends along, memory without the inactive page cache.
 */
export function metricsFrom(stats: EngineStats): Omit<InstanceMetrics, 'name' | 'revision' | 'replica'> {
  const cpuDelta = stats.cpu_stats.cpu_usage.total_usage - stats.precpu_stats.cpu_usage.total_usage;
  const systemDelta = (stats.cpu_stats.system_cpu_usage ?? 0) - (stats.precpu_stats.system_cpu_usage ?? 0);
  const onlineCpus = stats.cpu_stats.online_cpus || stats.cpu_stats.cpu_usage.percpu_usage?.length || 1;
  const cpuPercent = systemDelta > 0 && cpuDelta > 0 ? (cpuDelta / systemDelta) * onlineCpus * 100 : 0;

  const usage = stats.memory_stats.usage ?? 0;
  const extra = stats.memory_stats.stats ?? {};
  // cgroup v1 reports total_inactive_file, v2 inactive_file; the CLI subtracts whichever is there.
  const inactive = extra.total_inactive_file ?? extra.inactive_file ?? 0;
  const memoryBytes = inactive < usage ? usage - inactive : usage;
  const memoryLimitBytes = stats.memory_stats.limit ?? 0;

  let networkRxBytes = 0;
  let networkTxBytes = 0;
  for (const n of Object.values(stats.networks ?? {})) {
    networkRxBytes += n.rx_bytes;
    networkTxBytes += n.tx_bytes;
  }
  let blockReadBytes = 0;
  let blockWriteBytes = 0;
  for (const e of stats.blkio_stats?.io_service_bytes_recursive ?? []) {
    const op = e.op.toLowerCase();
    if (op === 'read') blockReadBytes += e.value;
    else if (op === 'write') blockWriteBytes += e.value;
  }
  return {
    cpuPercent: Math.round(cpuPercent * 100) / 100,
    onlineCpus,
    memoryBytes,
    memoryLimitBytes,
    memoryPercent: memoryLimitBytes ? Math.round((memoryBytes / memoryLimitBytes) * 10000) / 100 : 0,
    networkRxBytes,
    networkTxBytes,
    blockReadBytes,
    blockWriteBytes,
    pids: stats.pids_stats?.current ?? 0,
    at: stats.read,
  };
}

async function healthOf(s: Selected, port: number): Promise<InstanceHealth> {
  const { info } = s;
  const started = info.State.StartedAt && !info.State.StartedAt.startsWith('0001-') ? info.State.StartedAt : undefined;
  const everExited = Boolean(info.State.FinishedAt && !info.State.FinishedAt.startsWith('0001-'));
  const ips = containerIps(info);
  const probe =
    info.State.Running && !info.State.Restarting && ips[0]
      ? await httpProbe(ips[0], port)
      : { ok: false, error: stoppedByUs(info) ? 'stopped' : 'not running', at: new Date().toISOString() };
  return {
    name: instanceNameOf(info),
    revision: s.revision,
    replica: s.replica,
    state: info.State.Status as InstanceState,
    restarts: info.RestartCount,
    ...(started ? { startedAt: started } : {}),
    ...(everExited ? { exitCode: info.State.ExitCode } : {}),
    oomKilled: info.State.OOMKilled,
    probe,
  };
}

export async function deploymentHealth(
  docker: Docker,
  deploymentId: string,
  opts: { port: number; revision?: number },
): Promise<DeploymentHealth> {
  const selected = await selectInstances(
    docker,
    deploymentId,
    opts.revision === undefined ? {} : { revision: opts.revision },
  );
  const instances = await Promise.all(selected.map((s) => healthOf(s, opts.port)));
  // Instances we stopped on purpose do not count against the verdict; only those meant to run do.
  const meant = selected
    .map((s, i) => (stoppedByUs(s.info) ? undefined : instances[i]!))
    .filter((h) => h !== undefined);
  const ok = meant.filter((h) => h.state === 'running' && h.probe.ok).length;
  const overall = meant.length === 0 ? 'stopped' : ok === meant.length ? 'healthy' : ok > 0 ? 'degraded' : 'unhealthy';
  return { overall, instances, at: new Date().toISOString() };
}

export async function deploymentMetrics(
  docker: Docker,
  deploymentId: string,
  filter: InstanceFilter = {},
): Promise<InstanceMetrics[]> {
  const running = (await selectInstances(docker, deploymentId, filter)).filter((s) => s.info.State.Running);
  return Promise.all(
    running.map(async (s) => {
      // stream=false: the engine waits for a second sample, so precpu_stats is filled and the CPU delta is real.
      const stats = (await docker.getContainer(s.info.Id).stats({ stream: false })) as unknown as EngineStats;
      return { name: instanceNameOf(s.info), revision: s.revision, replica: s.replica, ...metricsFrom(stats) };
    }),
  );
}

const MAX_TAIL = 10_000;

function sinceSeconds(since: LogQuery['since']): number | undefined {
  if (since === undefined) return undefined;
  const s = typeof since === 'number' ? since : Date.parse(since) / 1000;
  if (!Number.isFinite(s) || s < 0) throw new TypeError('since must be an ISO time or epoch seconds');
  return Math.floor(s);
}

export async function deploymentLogs(docker: Docker, deploymentId: string, q: LogQuery): Promise<ProviderLogLine[]> {
  if (!Number.isFinite(q.tail)) throw new TypeError('tail must be a number of lines');
  const tail = Math.max(0, Math.min(MAX_TAIL, Math.floor(q.tail)));
  const since = sinceSeconds(q.since);
  const selected = (await selectInstances(docker, deploymentId)).filter(
    (s) => q.instance === undefined || instanceNameOf(s.info) === q.instance,
  );
  const lines: ProviderLogLine[] = [];
  for (const s of selected) {
    const instance = instanceNameOf(s.info);
    for (const l of await readContainerLogs(docker, s.info.Id, tail, since))
      if (l.stream === 'stdout' || l.stream === 'stderr') lines.push({ ...l, stream: l.stream, instance });
  }
  return lines.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
}
