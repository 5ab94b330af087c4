import { createCredentialSealer } from '@shared/databases/credentials';
import { createDatabaseStore } from '@shared/databases/store';
import { createAttachmentStore } from '@shared/deployments/attachments';
import { createStorageLedger } from '@shared/usage/storage-ledger';

import type { Core } from '../../core';
import type { DeploymentsContext } from '../deployments/compose';
import type { FeatureContext } from '../feature';
import { deploymentHooks } from './hooks';
import { createDatabaseService } from './service';
import { createBackupService } from './service.backups';

export type DatabasesNeeds = Pick<DeploymentsContext, 'deployments'>;

/** The database and backup services over their store, made here with its indexes. */
export async function composeDatabases(core: Core, needs: DatabasesNeeds) {
  const store = createDatabaseStore(core.db);
  await store.ensureIndexes();
  // Written by the worker as storage appears and goes, and by snapshot deletes here.
  const ledger = createStorageLedger(core.db);
  await ledger.ensureIndexes();
  const databases = createDatabaseService({
    store,
    sealer: createCredentialSealer(core.config.SECRETS_KEY),
    projects: core.projectStore,
    authz: core.authz,
    deployments: deploymentHooks({
      deployments: needs.deployments,
      attachments: createAttachmentStore(core.db),
      env: core.envSealer,
    }),
    temporal: core.temporal,
    lock: core.lock,
    taskQueue: core.config.TEMPORAL_TASK_QUEUE,
    quotaMultiplier: core.config.QUOTA_MULTIPLIER,
    acceptWaitMs: core.config.DEPLOYMENT_COMMAND_ACCEPT_WAIT_MS,
  });
  return {
    databases,
    backups: createBackupService({
      store,
      databases,
      temporal: core.temporal,
      taskQueue: core.config.TEMPORAL_TASK_QUEUE,
      s3: core.s3,
      bucket: core.config.S3_BUCKET,
      ledger,
    }),
  };
}

export type DatabasesContext = FeatureContext<DatabasesNeeds & Awaited<ReturnType<typeof composeDatabases>>>;
