import net from 'node:net';

import type Docker from 'dockerode';

import { LABELS } from '@shared/constants';
import { instanceNameOf as nameOf, type InstanceState, type Selected } from '@shared/engine/instances';

import type { Instance, InstanceIdentity, InstanceStatus } from './provider';

// Selecting and reading instances is shared with the api (health, metrics): see shared/engine/instances.ts.
export { containerIps, type Selected, selectInstances, stoppedByUs } from '@shared/engine/instances';

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

/** The one port we publish, when the container runs (a stopped container has no published port). */
export function publishedPort(info: Docker.ContainerInspectInfo): number | undefined {
  for (const bindings of Object.values(info.NetworkSettings.Ports ?? {})) {
    const port = Number(bindings?.[0]?.HostPort);
    if (port) return port;
  }
  return undefined;
}

/** Which container it is and what it runs, the same whether it runs or not. */
function identityOf(s: Selected): InstanceIdentity {
  return {
    id: s.info.Id,
    name: nameOf(s.info),
    deploymentId: s.info.Config.Labels[LABELS.deploymentId] ?? '',
    revision: s.revision,
    replica: s.replica,
    imageId: s.info.Image,
  };
}

/** Where a published port is reached: by the edge router (upstream) and directly (url). */
const reachOf = (at: Addressing, hostPort: number) => ({
  upstream: upstreamOf(at, hostPort),
  url: `http://${at.publicHost}:${hostPort}`,
  hostPort,
});

/** A container just started or started again: it runs, so it has a published port. */
export function toInstance(s: Selected, at: Addressing): Instance {
  const hostPort = publishedPort(s.info);
  if (!hostPort) throw new Error(`container ${nameOf(s.info)} runs with no published port`);
  return { ...identityOf(s), ...reachOf(at, hostPort) };
}

/** A container as listed, running or not: a stopped one has no published port, so no address. */
export function toStatus(s: Selected, at: Addressing): InstanceStatus {
  const { State: state } = s.info;
  const hostPort = state.Running ? (publishedPort(s.info) ?? null) : null;
  const started = state.StartedAt && !state.StartedAt.startsWith('0001-') ? state.StartedAt : undefined;
  const finished = state.FinishedAt && !state.FinishedAt.startsWith('0001-') ? state.FinishedAt : undefined;
  return {
    ...identityOf(s),
    state: state.Status as InstanceState,
    restarts: s.info.RestartCount,
    ...(started ? { startedAt: started } : {}),
    ...(finished ? { finishedAt: finished, exitCode: state.ExitCode } : {}),
    oomKilled: state.OOMKilled,
    ...(hostPort ? reachOf(at, hostPort) : { upstream: null, url: null, hostPort: null }),
  };
}
