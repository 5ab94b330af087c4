import type { S3Client } from '@aws-sdk/client-s3';
import { ApplicationFailure } from '@temporalio/common';
import type Docker from 'dockerode';

import type { BuildLimits } from '@shared/build/sandbox';
import type { Config } from '@shared/config';
import type { LogStore } from '@shared/deployments/logs-store';
import type { DeploymentSource } from '@shared/deployments/types';
import type { Redis } from '@shared/redis';
import type { Vault } from '@shared/secrets/vault';
import type { UploadStore } from '@shared/uploads/store';

export interface BuildDeps {
  docker: Docker;
  /** Bounds one organisation's builds across every worker; without it the bound is per worker. */
  redis?: Redis;
  /** Label value naming this Slipway instance: its reconciler removes only images carrying it. */
  instance: string;
  s3: S3Client;
  uploads: Pick<UploadStore, 'get'>;
  vault: Pick<Vault, 'revealForGit'>;
  logs: Pick<LogStore, 'append'>;
  config: Pick<
    Config,
    | 'S3_BUCKET'
    | 'ALLOW_PRIVATE_GIT_HOSTS'
    | 'GIT_CLONE_TIMEOUT_S'
    | 'GIT_MAX_BYTES'
    | 'BUILD_TIMEOUT_S'
    | 'BUILD_MAX_ENTRIES'
    | 'BUILD_MAX_UNCOMPRESSED_BYTES'
    | 'BUILD_BASE_IMAGE_NODE'
    | 'BUILD_BASE_IMAGE_STATIC'
    | 'BUILD_BASE_IMAGE_PYTHON'
    | 'BUILD_WORK_DIR'
    | 'BUILD_CONCURRENCY'
    | 'BUILD_CONCURRENCY_PER_ORG'
    | 'ALLOW_PRIVATE_REGISTRIES'
    | 'DOCKER_HOST'
    | 'REDIS_KEY_PREFIX'
  >;
}

export interface BuildInput {
  deploymentId: string;
  orgId: string;
  revision: number;
  port: number;
  source: Exclude<DeploymentSource, { type: 'image' }>;
  /** The plan's resources; workflows started before builds had limits pass none and get the free plan's. */
  limits?: BuildLimits;
}

export interface BuildResult {
  image: string;
  kind: string;
  /** The commit a Git source's build checked out. */
  commit?: string;
  /** The uploaded zip an upload's build extracted, as the upload recorded it. */
  upload?: { sha256: string; size: number };
  durationMs: number;
}

/** The build's own verdict (bad source, failed step, timeout): retrying would fail the same way. */
export const buildFailed = (message: string) => ApplicationFailure.nonRetryable(message, 'BuildFailed');
