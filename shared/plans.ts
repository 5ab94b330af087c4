import type { Provider } from './deployments/types';
import type { Plan } from './identity/store';

export interface PlanPolicy {
  providers: readonly Provider[];
  /** Deployments not destroyed and not failed; the next deploy answers 429 QUOTA_EXCEEDED. */
  maxLiveDeployments: number;
  /** Per-container resources on engine_local. */
  limits: { memoryMb: number; cpus: number; pids: number };
  /** Instances one deployment may run (`scale`); each has the per-container limits. */
  maxReplicas: number;
  /** Persistent volumes the organisation may hold, and their sizes added up. */
  volumes: { maxCount: number; maxTotalGb: number };
  /** Databases (a deployment's and managed ones) the organisation may hold, and their storage added up. */
  databases: { maxCount: number; maxTotalGb: number };
  /** Object-store buckets the organisation may hold, and keys per bucket (a link's key counts). */
  buckets: { maxCount: number; maxKeysPerBucket: number };
  /** Database sources the organisation may keep (external servers and managed databases added as sources). */
  databaseSources: { maxCount: number };
  /** Support tickets the organisation may open in 24 hours: a flood stops here, with 429 QUOTA_EXCEEDED. */
  tickets: { maxPerDay: number };
  /** Git connections and bindings the organisation may keep. */
  git: { maxConnections: number; maxBindings: number };
  /** Custom domains the organisation may hold (pending, verified or failed alike). */
  domains: { maxCount: number };
}

export const PLAN_POLICIES: Record<Plan, PlanPolicy> = {
  free: {
    providers: ['engine_local'],
    maxLiveDeployments: 3,
    limits: { memoryMb: 256, cpus: 0.5, pids: 256 },
    maxReplicas: 2,
    volumes: { maxCount: 2, maxTotalGb: 5 },
    databases: { maxCount: 2, maxTotalGb: 4 },
    buckets: { maxCount: 3, maxKeysPerBucket: 5 },
    databaseSources: { maxCount: 3 },
    tickets: { maxPerDay: 10 },
    git: { maxConnections: 3, maxBindings: 5 },
    domains: { maxCount: 2 },
  },
  pro: {
    providers: ['engine_local', 'cloud_a_run', 'cloud_b_container_apps', 'cloud_c_ecs_fargate'],
    maxLiveDeployments: 50,
    limits: { memoryMb: 1024, cpus: 1, pids: 1024 },
    maxReplicas: 5,
    volumes: { maxCount: 20, maxTotalGb: 100 },
    databases: { maxCount: 20, maxTotalGb: 200 },
    buckets: { maxCount: 20, maxKeysPerBucket: 20 },
    databaseSources: { maxCount: 50 },
    tickets: { maxPerDay: 50 },
    git: { maxConnections: 20, maxBindings: 100 },
    domains: { maxCount: 20 },
  },
  enterprise: {
    providers: ['engine_local', 'cloud_a_run', 'cloud_b_container_apps', 'cloud_c_ecs_fargate'],
    maxLiveDeployments: 1000,
    limits: { memoryMb: 4096, cpus: 2, pids: 4096 },
    maxReplicas: 20,
    volumes: { maxCount: 200, maxTotalGb: 2000 },
    databases: { maxCount: 200, maxTotalGb: 4000 },
    buckets: { maxCount: 200, maxKeysPerBucket: 50 },
    databaseSources: { maxCount: 500 },
    tickets: { maxPerDay: 200 },
    git: { maxConnections: 200, maxBindings: 1000 },
    domains: { maxCount: 200 },
  },
};
