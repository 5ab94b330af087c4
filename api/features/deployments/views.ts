import type { ReleaseRecord } from '../../../shared/deployments/releases-store';
import { type DeploymentRecord, envNamesOf } from '../../../shared/deployments/types';

/** The newest releases of a deployment, as status reads show them. */
export interface ReleasesSummary {
  total: number;
  recent: Omit<ReleaseRecord, 'envSealed'>[];
}

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
    status: r.status,
    createdAt: r.createdAt.toISOString(),
    ...(r.readyAt ? { readyAt: r.readyAt.toISOString() } : {}),
    ...(r.endedAt ? { endedAt: r.endedAt.toISOString() } : {}),
  };
}

/** What a caller sees of a deployment: env names only, never their values. `releases` on single reads. */
export function deploymentView(d: DeploymentRecord, releases?: ReleasesSummary) {
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
    ...(d.error ? { error: d.error } : {}),
    revision: d.revision,
    ...(d.replicas !== undefined ? { replicas: d.replicas } : {}),
    ...(d.instances
      ? { instances: d.instances.map((i) => ({ name: i.name, revision: i.revision, replica: i.replica, url: i.url })) }
      : {}),
    ...(lf ? { lastFailure: { ...lf, at: lf.at.toISOString() } } : {}),
    ...(releases ? { releases: { total: releases.total, recent: releases.recent.map(releaseView) } } : {}),
  };
}

/** The platform API's view: the same, plus where it came from and its project. */
export function platformDeploymentView(d: DeploymentRecord, releases?: ReleasesSummary) {
  return { ...deploymentView(d, releases), origin: d.origin, projectId: d.projectId ?? null };
}
