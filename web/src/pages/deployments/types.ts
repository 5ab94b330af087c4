/** The shapes this area reads, as api/features/deployments/schemas*.ts define them. */
export const STATUSES = ['queued', 'building', 'deploying', 'running', 'stopping', 'stopped', 'failed'] as const;

export interface Deployment {
  id: string;
  name: string;
  status: string;
  url: string | null;
  projectId: string | null;
  source: { type: 'image'; image: string } | { type: 'upload'; uploadId: string } | { type: 'git'; repoUrl: string };
  port: number;
  envVarNames: string[];
  replicas?: number;
  revision: number;
  createdAt: string;
  updatedAt: string;
  events: { status: string; message: string; at: string }[];
  error?: { message: string };
  lastFailure?: { message: string };
}

export interface Release {
  revision: number;
  image: string;
  trigger: 'deploy' | 'redeploy' | 'rollback';
  rollbackOf?: number;
  status: 'starting' | 'active' | 'superseded' | 'failed';
  createdAt: string;
  readyAt?: string;
}

export interface LogLine {
  timestamp: string;
  stream: 'stdout' | 'stderr' | 'build' | 'system';
  message: string;
  instance?: string;
}
