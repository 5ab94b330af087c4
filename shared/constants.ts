/** Search attributes the workflows set, so the Temporal UI can filter by them. */
export const SEARCH_ATTRIBUTES = { deploymentId: 'DeploymentId', orgId: 'OrgId' } as const;

export const deploymentWorkflowId = (deploymentId: string) => `deployment/${deploymentId}`;

/** Labels on every container, so the engine can be reconciled against MongoDB. */
export const LABELS = {
  managed: 'dev.slipway.managed',
  deploymentId: 'dev.slipway.deployment-id',
  orgId: 'dev.slipway.org-id',
  revision: 'dev.slipway.revision',
  /** Replica index within the release (engine_local instances; absent on containers made before replicas: 0). */
  replica: 'dev.slipway.replica',
  /** Which Slipway instance made it: a reconciler removes only its own instance's objects (shared/instance.ts). */
  instance: 'dev.slipway.instance',
} as const;
