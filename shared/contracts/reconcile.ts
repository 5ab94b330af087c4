/**
 * The reconcile workflow's contract: its type name, its schedule's ID and its report, no workflow code
 * (docs/architecture.md, "Layers and where code goes"). The name is the exported function's name in
 * workflows/reconcile/workflow.ts, which the worker registers.
 */
export const RECONCILE_WORKFLOW = 'reconcileWorkflow';

/** One schedule per task queue: each instance judges only its own objects. */
export const reconcileScheduleId = (taskQueue: string) => `reconcile/${taskQueue}`;

export interface ReconcileRemoval {
  kind: 'container' | 'image' | 'network';
  id: string;
  name: string;
  deploymentId?: string;
  reason: 'destroyed' | 'unknown' | 'unused';
}

/** What one run removed from the engine. */
export interface ReconcileCounts {
  containers: number;
  images: number;
  networks: number;
  /** What was removed, the first 100 (the counts are complete). */
  removed: ReconcileRemoval[];
}

/** What one run put back on the edge router: routes it had lost, and upstream files that were gone. */
export interface RoutesRestored {
  routes: number;
  files: number;
  /** Verified custom domains' routes put back (absent from reports made before domains existed). */
  domains?: number;
}

export interface ReconcileReport extends ReconcileCounts {
  /** Records hidden for destroys an api left half done. */
  hidden: number;
  /** Deployment workflows told of their destroy (those still open). */
  signalled: number;
  /** Absent from runs before the router was reconciled too. */
  restored?: RoutesRestored;
  /** What the clouds held of deployments that are gone; absent from runs before cloud providers. */
  clouds?: {
    accounts: number;
    removed: { provider: string; deploymentId: string; resources: string[] }[];
    failed: number;
  };
}
