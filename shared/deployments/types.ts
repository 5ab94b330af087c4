import { z } from 'zod';

import type { Sealed } from '../secrets/box';

export const DEPLOYMENT_STATUSES = [
  'queued',
  'building',
  'deploying',
  'running',
  'stopping',
  'stopped',
  'failed',
] as const;
export const DeploymentStatus = z.enum(DEPLOYMENT_STATUSES);
export type DeploymentStatus = z.infer<typeof DeploymentStatus>;

export const PROVIDERS = ['engine_local', 'cloud_a_run', 'cloud_b_container_apps', 'cloud_c_ecs_fargate'] as const;
export const Provider = z.enum(PROVIDERS);
export type Provider = z.infer<typeof Provider>;

export type DeploymentSource =
  | { type: 'image'; image: string }
  | { type: 'upload'; uploadId: string; dockerfilePath?: string }
  | {
      type: 'git';
      repoUrl: string;
      branch?: string;
      /** Build exactly this commit (a full SHA) rather than the branch's head: a redeploy may name one. */
      commit?: string;
      gitTokenSecretId?: string;
      /** Vault environment the token must come from (the deploy's; PRODUCTION by default). */
      vaultEnvironment?: 'DEVELOPMENT' | 'STAGING' | 'PRODUCTION';
      dockerfilePath?: string;
    };

export interface DeploymentEvent {
  status: DeploymentStatus;
  message: string;
  at: Date;
}

export interface DeploymentFailure {
  code: 'DEPLOYMENT_FAILED';
  phase: 'build' | 'pull' | 'start' | 'ready' | 'destroy';
  message: string;
}

/**
 * Why the last command that tried a new release (a redeploy, rollback, start or scale) did not get it serving. A
 * redeploy that fails leaves the old release serving and the status `running`: this says what went wrong.
 */
export interface LastFailure {
  phase: DeploymentFailure['phase'] | 'switch';
  /** The command that failed, and the release it tried. */
  command: 'deploy' | 'redeploy' | 'rollback' | 'start' | 'scale';
  revision: number;
  message: string;
  exitCode?: number;
  lastLines?: string[];
  hint?: string;
  at: Date;
}

/** One running container of the serving release, as the status shows it (`instances[].url` is its direct address). */
export interface DeploymentInstance {
  name: string;
  revision: number;
  replica: number;
  url: string;
}

/** The MongoDB record of a deployment. `version` only ever grows, so a retried write cannot step it back. */
export interface DeploymentRecord {
  _id: string;
  orgId: string;
  createdBy: string;
  /** Which API created it; the compatibility list shows only its own. */
  origin: 'compat' | 'platform';
  name: string;
  provider: Provider;
  /**
   * Where it runs, one of its provider's regions (shared/deployments/regions.ts), fixed at creation. Absent on records
   * made before deployments kept one: those run on this server's engine, so their region is ENGINE_REGION.
   */
  region?: string;
  source: DeploymentSource;
  port: number;
  /**
   * Names of the environment variables; the values are secrets and live only in `envSealed` (docs/architecture.md, "A
   * deployment's lifecycle, as workflows").
   */
  envNames?: string[];
  /** The name → value map as JSON, AES-256-GCM under SECRETS_KEY, bound to this deployment (deployment-env.ts). */
  envSealed?: Sealed;
  /** Records written before env values were sealed held them here in the clear; read for those only. */
  envVars?: Record<string, string>;
  /**
   * The caller's idempotency key (the deploy body's `requestId`); `_id` is derived from it, which is what finds a
   * retry. Records written before the rename hold it as `requestId`; nothing reads it back.
   */
  idempotencyKey?: string;
  projectId?: string;
  revision: number;
  status: DeploymentStatus;
  version: number;
  events: DeploymentEvent[];
  url?: string;
  error?: DeploymentFailure;
  container?: { id: string; name: string; hostPort: number };
  /** Containers the serving release runs (0 when stopped); written by the deployment's workflow only. */
  replicas?: number;
  instances?: DeploymentInstance[];
  lastFailure?: LastFailure;
  createdAt: Date;
  updatedAt: Date;
  destroyedAt?: Date;
}

/** The env names a caller may see, for sealed records and for those written before sealing alike. */
export function envNamesOf(d: Pick<DeploymentRecord, 'envNames' | 'envVars'>): string[] {
  return [...(d.envNames ?? Object.keys(d.envVars ?? {}))].sort();
}

/**
 * A destroy, written before the deployment is hidden and never changed: whatever happens to the api after this
 * insert (a crash, Temporal unreachable), the reconciler finds the intent and carries it out.
 */
export interface DestroyIntent {
  /** The deployment's ID: one intent per deployment, a second DELETE finds it already there. */
  _id: string;
  orgId: string;
  requestedBy: string;
  requestedAt: Date;
  /** The HTTP request that asked (x-request-id), so an operator can follow it. */
  requestId?: string;
  /** Its databases are kept (as managed databases of its project) rather than destroyed with it. */
  keepDatabases?: boolean;
}
