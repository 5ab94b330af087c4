import type { Client } from '@temporalio/client';
import type Docker from 'dockerode';

import type { Authz } from '@shared/authz/authorize';
import type { GitSourceCheck } from '@shared/build/git-source';
import type { CloudCredentialStore } from '@shared/cloud/store';
import type { Config } from '@shared/config';
import type { LogStore } from '@shared/deployments/logs-store';
import type { StatusModel } from '@shared/deployments/read-model';
import type { StatusFeed } from '@shared/deployments/status-feed';
import type { DeploymentStore } from '@shared/deployments/store';
import type { Logger } from '@shared/logger';
import type { OrgSettingsReader } from '@shared/org-settings/store';
import type { ProjectStore } from '@shared/projects/store';
import type { EnvSealer } from '@shared/secrets/deployment-env';
import type { UploadStore } from '@shared/uploads/store';
import type { VolumeStore } from '@shared/volumes/store';

import type { Quota } from './quota';

/** What every part of the deployment service is made of; each part takes only the fields it uses. */
export interface DeploymentServiceDeps {
  store: DeploymentStore;
  logs: LogStore;
  /** Tells the event streams and `?wait=` reads of a deployment that it was destroyed. */
  feed: Pick<StatusFeed, 'publish'>;
  /** Status reads answer from it; a destroy buries the deployment's entry before it answers. */
  model: Pick<StatusModel, 'read' | 'fill' | 'bury'>;
  uploads: Pick<UploadStore, 'get'>;
  /** A deploy's projectId must name a project of the caller's organisation. */
  projects: Pick<ProjectStore, 'get' | 'memberRole' | 'projectIdsOf'>;
  /** Which projects' deployments a caller's lists show; whether a caller may read a volume it attaches. */
  authz: Pick<Authz, 'visibility' | 'authorize'>;
  /** Volumes a deployment mounts are the organisation's, read through their own records. */
  volumes: Pick<VolumeStore, 'get'>;
  /** Seals a deploy's environment values (and opens them for a rollback's redeploy). */
  env: EnvSealer;
  /** The rules a source deploy's repository and Git token are held to. */
  git: GitSourceCheck;
  temporal: Client;
  docker: Docker;
  log: Pick<Logger, 'warn'>;
  quota: Pick<Quota, 'acquire' | 'confirm'>;
  /** The organisation's default and allowed providers, and its default vault environment, applied to new deploys. */
  orgSettings: OrgSettingsReader;
  /** Which clouds, in which regions, the organisation has credentials for. */
  cloudCredentials: Pick<CloudCredentialStore, 'regions' | 'summary'>;
  config: Pick<
    Config,
    | 'DEPLOY_READY_TIMEOUT_S'
    | 'RELEASES_KEPT'
    | 'DEPLOYMENT_COMMANDS_PER_RUN'
    | 'TEMPORAL_TASK_QUEUE'
    | 'QUOTA_MULTIPLIER'
    | 'BUILD_TIMEOUT_S'
    | 'DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS'
    | 'ALLOW_PRIVATE_REGISTRIES'
    | 'ENGINE_REGION'
  >;
}
