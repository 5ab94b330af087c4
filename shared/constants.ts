import { defineSearchAttributeKey } from '@temporalio/common';

/**
 * Search attributes of deployment workflows, so an operator filters the Temporal UI's list by them
 * (`DeploymentStatus="failed" AND OrgId="…"`) instead of opening each `deployment/<id>`. Keywords: matched exactly.
 * The dev server registers them by flag (scripts/stack/parts.ts), any other server at the worker's start.
 */
export const SEARCH_ATTRIBUTES = {
  deploymentId: defineSearchAttributeKey('DeploymentId', 'KEYWORD'),
  orgId: defineSearchAttributeKey('OrgId', 'KEYWORD'),
  /** The record's status, updated by the workflow on every change; `destroyed` once its destroy has begun. */
  status: defineSearchAttributeKey('DeploymentStatus', 'KEYWORD'),
  name: defineSearchAttributeKey('DeploymentName', 'KEYWORD'),
  /** Absent for a deployment of no project. */
  projectId: defineSearchAttributeKey('ProjectId', 'KEYWORD'),
} as const;

/** Labels on every container, so the engine can be reconciled against MongoDB. */
export const LABELS = {
  managed: 'dev.slipway.managed',
  deploymentId: 'dev.slipway.deployment-id',
  orgId: 'dev.slipway.org-id',
  revision: 'dev.slipway.revision',
  /** Replica index within the release (engine_local instances; absent on containers made before replicas: 0). */
  replica: 'dev.slipway.replica',
  /** The persistent volume an engine volume stores (activities/providers/engine-volumes.ts). */
  volumeId: 'dev.slipway.volume-id',
  /** Which Slipway instance made it: a reconciler removes only its own instance's objects (shared/instance.ts). */
  instance: 'dev.slipway.instance',
} as const;
