import { z } from 'zod';

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

/** The MongoDB record of a deployment. `version` only ever grows, so a retried write cannot step it back. */
export interface DeploymentRecord {
  _id: string;
  orgId: string;
  createdBy: string;
  /** Which API created it; the compatibility list shows only its own. */
  origin: 'compat' | 'platform';
  name: string;
  provider: Provider;
  source: DeploymentSource;
  port: number;
  envVars: Record<string, string>;
  requestId?: string;
  projectId?: string;
  revision: number;
  status: DeploymentStatus;
  version: number;
  events: DeploymentEvent[];
  url?: string;
  error?: DeploymentFailure;
  container?: { id: string; name: string; hostPort: number };
  createdAt: Date;
  updatedAt: Date;
  destroyedAt?: Date;
}
