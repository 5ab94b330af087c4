import type Docker from 'dockerode';

import { LABELS } from '../constants';

/**
 * Reading a deployment's instances on the engine (one container per deployment, revision and replica, found by its
 * labels). Read-only and shared: the worker's provider (activities/providers/engine-local.ts) acts on what this
 * selects, and the api reads health and metrics through it without importing activities (docs/architecture.md, "Layers
 * and where code goes").
 */

/** Selects instances of one deployment; every given condition must hold. Empty selects them all. */
export interface InstanceFilter {
  /** Only this release. */
  revision?: number;
  /** Every release but this one (after a switch: remove the old releases). */
  exceptRevision?: number;
  /** Only replicas with index >= this (scale down to N: `{revision, replicasFrom: N}`). */
  replicasFrom?: number;
}

/** The engine's container states. `exited` is both "stopped by us" and "crashed": see `restarts` / `exitCode`. */
export type InstanceState = 'created' | 'running' | 'restarting' | 'paused' | 'exited' | 'dead' | 'removing';

export interface Selected {
  info: Docker.ContainerInspectInfo;
  revision: number;
  replica: number;
}

/** Every engine label filter accepts only `key=value`; a revision or replica is a non-negative integer. */
function checkIndex(what: string, n: number | undefined): void {
  if (n !== undefined && !(Number.isSafeInteger(n) && n >= 0)) {
    throw new TypeError(`${what} must be a non-negative integer`);
  }
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

/** The container's addresses on its networks (the org bridge): where readiness and health probes go. */
export function containerIps(info: Docker.ContainerInspectInfo): string[] {
  return Object.values(info.NetworkSettings.Networks ?? {})
    .map((n) => n.IPAddress)
    .filter(Boolean);
}

/** Stopped by us: not running and its restart policy switched off, so nothing will bring it back by itself. */
export function stoppedByUs(info: Docker.ContainerInspectInfo): boolean {
  return !info.State.Running && !info.State.Restarting && (info.HostConfig.RestartPolicy?.Name ?? 'no') === 'no';
}

export const instanceNameOf = (info: Docker.ContainerInspectInfo) => info.Name.replace(/^\//, '');
