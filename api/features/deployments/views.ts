import { type FailureCause, hintFor } from '@shared/deployments/hints';
import type { StatusRecord } from '@shared/deployments/read-model';
import type { ReleaseRecord, ReleasesSummary } from '@shared/deployments/releases-store';
import { envNamesOf } from '@shared/deployments/types';
import { unreachableRegistryIn } from '@shared/images/pull-failure';

export type { ReleasesSummary };

/** A release as a caller sees it: env names, never the sealed values. */
export function releaseView(r: Omit<ReleaseRecord, 'envSealed'>) {
  return {
    revision: r.revision,
    image: r.image,
    imageId: r.imageId,
    configHash: r.configHash,
    envNames: r.envNames,
    trigger: r.trigger,
    ...(r.rollbackOf !== undefined ? { rollbackOf: r.rollbackOf } : {}),
    ...(r.source ? { source: r.source } : {}),
    ...(r.mounts ? { mounts: r.mounts } : {}),
    status: r.status,
    createdAt: r.createdAt.toISOString(),
    ...(r.readyAt ? { readyAt: r.readyAt.toISOString() } : {}),
    ...(r.endedAt ? { endedAt: r.endedAt.toISOString() } : {}),
  };
}

/** A pull that reached no registry says which (its message names it); any other is an image not found. */
function pullCause(message: string): FailureCause {
  const registry = unreachableRegistryIn(message);
  return registry ? { cause: 'registry_unreachable', registry } : { cause: 'image_missing' };
}

/** Hints by phase, for failures recorded without the provider's diagnosis (older workflows, build and pull). */
const phaseCause = (phase: string, port: number, message: string): FailureCause =>
  phase === 'build'
    ? { cause: 'build_failed' }
    : phase === 'pull'
      ? pullCause(message)
      : phase === 'start'
        ? { cause: 'app_exited' }
        : phase === 'ready'
          ? { cause: 'port_never_opened', port }
          : { cause: 'unknown' };

/**
 * A failed deployment's error: what failed, and what to do (the provider's diagnosis when the release got as far
 * as a container: its exit code and last lines).
 */
function errorView(d: StatusRecord, error: NonNullable<StatusRecord['error']>) {
  // The provider's diagnosis comes with the container's last lines; without it, the phase decides the hint.
  const lf = d.lastFailure;
  const diagnosed = lf && lf.phase === error.phase && lf.lastLines ? lf : undefined;
  return {
    ...error,
    ...(diagnosed?.exitCode !== undefined ? { exitCode: diagnosed.exitCode } : {}),
    ...(diagnosed?.lastLines ? { lastLines: diagnosed.lastLines } : {}),
    hint: diagnosed?.hint ?? hintFor(phaseCause(error.phase, d.port, error.message)),
  };
}

/** What a caller sees of a deployment: env names only, never their values. `releases` on single reads. */
export function deploymentView(d: StatusRecord, releases?: ReleasesSummary) {
  const lf = d.lastFailure;
  return {
    id: d._id,
    name: d.name,
    status: d.status,
    provider: d.provider,
    source: d.source,
    port: d.port,
    url: d.url ?? null,
    envVarNames: envNamesOf(d),
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
    events: d.events.map((e) => ({ status: e.status, message: e.message, at: e.at.toISOString() })),
    ...(d.error ? { error: errorView(d, d.error) } : {}),
    revision: d.revision,
    ...(d.replicas !== undefined ? { replicas: d.replicas } : {}),
    ...(d.instances
      ? { instances: d.instances.map((i) => ({ name: i.name, revision: i.revision, replica: i.replica, url: i.url })) }
      : {}),
    ...(lf ? { lastFailure: { ...lf, at: lf.at.toISOString() } } : {}),
    ...(releases ? { releases: { total: releases.total, recent: releases.recent.map(releaseView) } } : {}),
  };
}

/**
 * The platform API's view: the same, plus its region, where it came from, its project and (single reads) its volumes.
 * A record made before deployments kept a region ran on this server's engine: its region is `engineRegion`.
 */
export function platformDeploymentView(
  d: StatusRecord,
  engineRegion: string,
  releases?: ReleasesSummary,
  volumes?: { volumeId: string; name: string | null; mountPath: string }[],
) {
  return {
    ...deploymentView(d, releases),
    region: d.region ?? engineRegion,
    origin: d.origin,
    projectId: d.projectId ?? null,
    ...(volumes ? { volumes } : {}),
  };
}
