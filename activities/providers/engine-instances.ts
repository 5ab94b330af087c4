import net from 'node:net';

import type Docker from 'dockerode';

import { LABELS } from '../../shared/constants';
import type { Instance, InstanceFilter, InstanceState, InstanceStatus } from './provider';

/**
 * engine_local instances: one container per (deploymentId, revision, replica), found again by its labels. Replica 0
 * keeps the name containers had before replicas existed, so a retried start from a workflow that began on older
 * code finds the container it made, and the new workflow sees that container as replica 0.
 */
export function instanceName(deploymentId: string, revision: number, replica: number): string {
  const base = `slipway-${deploymentId}-r${revision}`;
  return replica === 0 ? base : `${base}-${replica}`;
}

export interface Addressing {
  /** Host name put in the direct url. */
  publicHost: string;
  /** Host address container ports are published on. */
  bindIp: string;
  /** Where a router that is not on the engine's host reaches the published ports (EDGE_UPSTREAM_HOST). */
  upstreamHost?: string;
}

/** `host:port` as the edge router dials it; an unspecified bind address is reached on loopback. */
export function upstreamOf(at: Addressing, hostPort: number): string {
  const host = at.upstreamHost || (at.bindIp === '0.0.0.0' ? '127.0.0.1' : at.bindIp === '::' ? '::1' : at.bindIp);
  return net.isIPv6(host) ? `[${host}]:${hostPort}` : `${host}:${hostPort}`;
}

/** Every engine label filter accepts only `key=value`; a revision or replica is a non-negative integer. */
function checkIndex(what: string, n: number | undefined): void {
  if (n !== undefined && !(Number.isSafeInteger(n) && n >= 0)) {
    throw new TypeError(`${what} must be a non-negative integer`);
  }
}

export interface Selected {
  info: Docker.ContainerInspectInfo;
  revision: number;
  replica: number;
}

const revisionOf = (labels: Record<string, string>) => Number(labels[LABELS.revision] ?? 0);
const replicaOf = (labels: Record<string, string>) => Number(labels[LABELS.replica] ?? 0);

/** The deployment's containers matching `filter`, inspected, ordered by revision then replica. */
export async function selectInstances(
  docker: Docker,
  deploymentId: string,
  filter: InstanceFilter = {},
): Promise<Selected[]> {
  checkIndex('revision', filter.revision);
  checkIndex('exceptRevision', filter.exceptRevision);
  checkIndex('replicasFrom', filter.replicasFrom);
  const label = [`${LABELS.deploymentId}=${deploymentId}`];
  if (filter.revision !== undefined) label.push(`${LABELS.revision}=${filter.revision}`);
  const summaries = await docker.listContainers({ all: true, filters: { label } });
  const selected: Selected[] = [];
  for (const s of summaries) {
    const revision = revisionOf(s.Labels);
    const replica = replicaOf(s.Labels);
    if (filter.exceptRevision !== undefined && revision === filter.exceptRevision) continue;
    if (filter.replicasFrom !== undefined && replica < filter.replicasFrom) continue;
    const info = await docker
      .getContainer(s.Id)
      .inspect()
      .catch((err: unknown) => {
        // Removed between the listing and now: no longer an instance.
        if ((err as { statusCode?: number }).statusCode === 404) return undefined;
        throw err;
      });
    if (info) selected.push({ info, revision, replica });
  }
  return selected.sort((a, b) => a.revision - b.revision || a.replica - b.replica);
}

/** The one port we publish, when the container runs (a stopped container has no published port). */
export function publishedPort(info: Docker.ContainerInspectInfo): number | undefined {
  for (const bindings of Object.values(info.NetworkSettings.Ports ?? {})) {
    const port = Number(bindings?.[0]?.HostPort);
    if (port) return port;
  }
  return undefined;
}

/** The container's addresses on its networks (the org bridge): where readiness and health probes go. */
export function containerIps(info: Docker.ContainerInspectInfo): string[] {
  return Object.values(info.NetworkSettings.Networks ?? {})
    .map((n) => n.IPAddress)
    .filter(Boolean);
}

const nameOf = (info: Docker.ContainerInspectInfo) => info.Name.replace(/^\//, '');

export function toInstance(s: Selected, at: Addressing): Instance {
  const hostPort = publishedPort(s.info);
  if (!hostPort) throw new Error(`container ${nameOf(s.info)} runs with no published port`);
  return {
    id: s.info.Id,
    name: nameOf(s.info),
    deploymentId: s.info.Config.Labels[LABELS.deploymentId] ?? '',
    revision: s.revision,
    replica: s.replica,
    imageId: s.info.Image,
    upstream: upstreamOf(at, hostPort),
    url: `http://${at.publicHost}:${hostPort}`,
    hostPort,
  };
}

export function toStatus(s: Selected, at: Addressing): InstanceStatus {
  const { State: state } = s.info;
  const hostPort = state.Running ? (publishedPort(s.info) ?? null) : null;
  const started = state.StartedAt && !state.StartedAt.startsWith('0001-') ? state.StartedAt : undefined;
  const finished = state.FinishedAt && !state.FinishedAt.startsWith('0001-') ? state.FinishedAt : undefined;
  return {
    id: s.info.Id,
    name: nameOf(s.info),
    deploymentId: s.info.Config.Labels[LABELS.deploymentId] ?? '',
    revision: s.revision,
    replica: s.replica,
    imageId: s.info.Image,
    state: state.Status as InstanceState,
    restarts: s.info.RestartCount,
    ...(started ? { startedAt: started } : {}),
    ...(finished ? { finishedAt: finished, exitCode: state.ExitCode } : {}),
    oomKilled: state.OOMKilled,
    upstream: hostPort ? upstreamOf(at, hostPort) : null,
    url: hostPort ? `http://${at.publicHost}:${hostPort}` : null,
    hostPort,
  };
}

/** Stopped by us: not running and its restart policy switched off, so nothing will bring it back by itself. */
export function stoppedByUs(info: Docker.ContainerInspectInfo): boolean {
  return !info.State.Running && !info.State.Restarting && (info.HostConfig.RestartPolicy?.Name ?? 'no') === 'no';
}
