import { type DeploymentRecord, envNamesOf } from '../../../shared/deployments/types';

/** What a caller sees of a deployment: env names only, never their values. */
export function deploymentView(d: DeploymentRecord) {
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
  };
}
