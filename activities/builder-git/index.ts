import type { S3Client } from '@aws-sdk/client-s3';
import type { Db } from 'mongodb';

import { createBlobStore } from '@shared/builder/files';
import { createGitBindingStore } from '@shared/builder/git-store';
import { createBuilderStore } from '@shared/builder/store';
import type { Config } from '@shared/config';

import { createGitActivities, type GitActivityDeps } from './git';

/** The builder Git workflows' activities (workflows/builder-git: push, import) from the worker's connections. */
export function createBuilderGitActivities(deps: {
  db: Db;
  s3: S3Client;
  vault: GitActivityDeps['vault'];
  config: GitActivityDeps['config'] & Pick<Config, 'S3_BUCKET'>;
}) {
  return createGitActivities({
    store: createBuilderStore(deps.db),
    blobs: createBlobStore({ s3: deps.s3, bucket: deps.config.S3_BUCKET }),
    bindings: createGitBindingStore(deps.db),
    vault: deps.vault,
    config: deps.config,
  });
}

export type BuilderGitActivities = ReturnType<typeof createBuilderGitActivities>;
