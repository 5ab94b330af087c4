import type { S3Client } from '@aws-sdk/client-s3';
import type Docker from 'dockerode';
import type { Db } from 'mongodb';

import { createBlobStore } from '../shared/builder/files';
import { createGitBindingStore } from '../shared/builder/git-store';
import { createSandboxStore } from '../shared/builder/sandbox-store';
import { createBuilderStore } from '../shared/builder/store';
import type { Config } from '../shared/config';
import { edgeRouterFromConfig } from '../shared/edge';
import { type BuilderGitDeps, createBuilderGitActivities } from './builder-git';
import { createSandboxActivities, type SandboxActivityDeps } from './sandbox';

/** The sandbox workflow's activities from the worker's connections. */
export function sandboxActivitiesFrom(deps: {
  docker: Docker;
  db: Db;
  s3: S3Client;
  instance: string;
  engine: SandboxActivityDeps['engine'];
  config: SandboxActivityDeps['config'] &
    Pick<Config, 'S3_BUCKET' | 'EDGE_ADMIN_URL' | 'EDGE_DOMAIN' | 'EDGE_PORT' | 'EDGE_BIND_IP'>;
}) {
  return createSandboxActivities({
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

/** The builder's Git activities (push, import) from the worker's connections. */
export function builderGitActivitiesFrom(deps: {
  db: Db;
  s3: S3Client;
  vault: BuilderGitDeps['vault'];
  config: BuilderGitDeps['config'] & Pick<Config, 'S3_BUCKET'>;
}) {
  return createBuilderGitActivities({
    store: createBuilderStore(deps.db),
    blobs: createBlobStore({ s3: deps.s3, bucket: deps.config.S3_BUCKET }),
    bindings: createGitBindingStore(deps.db),
    vault: deps.vault,
    config: deps.config,
  });
}
