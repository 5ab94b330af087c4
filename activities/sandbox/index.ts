import type { S3Client } from '@aws-sdk/client-s3';
import type Docker from 'dockerode';
import type { Db } from 'mongodb';

import { createBlobStore } from '@shared/builder/files';
import { createSandboxStore } from '@shared/builder/sandbox-store';
import { createBuilderStore } from '@shared/builder/store';
import type { Config } from '@shared/config';
import { edgeRouterFromConfig } from '@shared/edge';

import { createSyncActivities, type SyncActivityDeps } from './sync';

/**
 * The sandbox workflow's activities (workflows/sandbox) from the worker's connections: a builder session's live
 * preview, containers like deployments' (the engine adapters in activities/providers/) behind the edge router.
 */
export function createSandboxActivities(deps: {
  docker: Docker;
  db: Db;
  s3: S3Client;
  instance: string;
  engine: SyncActivityDeps['engine'];
  config: SyncActivityDeps['config'] &
    Pick<Config, 'S3_BUCKET' | 'EDGE_ADMIN_URL' | 'EDGE_DOMAIN' | 'EDGE_PORT' | 'EDGE_BIND_IP' | 'EDGE_UPSTREAMS_DIR'>;
}) {
  return createSyncActivities({
    docker: deps.docker,
    instance: deps.instance,
    sandboxes: createSandboxStore(deps.db),
    builder: createBuilderStore(deps.db),
    blobs: createBlobStore({ s3: deps.s3, bucket: deps.config.S3_BUCKET }),
    edge: edgeRouterFromConfig(deps.config),
    engine: deps.engine,
    config: deps.config,
  });
}

export type SandboxActivities = ReturnType<typeof createSandboxActivities>;
