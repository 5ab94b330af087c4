import type { S3Client } from '@aws-sdk/client-s3';
import { Context } from '@temporalio/activity';
import type Docker from 'dockerode';
import type { Db } from 'mongodb';

import { createBlobStore } from '../shared/builder/files';
import { createGitBindingStore } from '../shared/builder/git-store';
import { createSandboxStore } from '../shared/builder/sandbox-store';
import { syncSession } from '../shared/builder/sandbox-sync';
import { createBuilderStore } from '../shared/builder/store';
import type { Config } from '../shared/config';
import { edgeRouterFromConfig } from '../shared/edge';
import type { BuilderActivityDeps } from './builder';
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

/** How long a turn waits for the preview after its checkpoint; a slower sync goes on and the turn ends. */
const TURN_SYNC_WAIT_MS = 40_000;

/**
 * The builder turn's `onCheckpoint`: a session with a sandbox shows the turn's checkpoint in its preview, and the
 * turn's stream says so with `sandbox.synced` (or that it is still syncing).
 */
export function sandboxTurnHook(deps: {
  db: Db;
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE' | 'SANDBOX_IDLE_S'>;
}): BuilderActivityDeps['onCheckpoint'] {
  const sandboxes = createSandboxStore(deps.db);
  return async (turn, checkpoint, emit) => {
    const sandbox = await sandboxes.get(turn.orgId, turn.sessionId);
    if (!sandbox) return;
    const sync = syncSession(Context.current().client, deps.config, {
      sessionId: turn.sessionId,
      orgId: turn.orgId,
      checkpointId: checkpoint._id,
      seq: checkpoint.seq,
    });
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      sync,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), TURN_SYNC_WAIT_MS);
      }),
    ]).finally(() => clearTimeout(timer));
    await emit('sandbox.synced', {
      checkpointId: checkpoint._id,
      previewUrl: sandbox.previewUrl,
      inSync: outcome?.status === 'running' && outcome.appliedCheckpointId === checkpoint._id,
      status: outcome?.status ?? 'syncing',
      action: outcome?.action ?? null,
      error: outcome?.error ?? null,
    });
  };
}
