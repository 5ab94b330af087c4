import { executeChild, ParentClosePolicy, setCurrentDetails, startChild } from '@temporalio/workflow';

import {
  BACKUP_WORKFLOW,
  backupWorkflowId,
  DATABASE_WORKFLOW,
  databaseWorkflowId,
  type DatabaseWorkflowInput,
  type RestoreOutcome,
  type RestoreWorkflowInput,
} from '@shared/contracts/database';

import { records, server, transfers } from './activities';
import { asFailure, failureOf } from './failures';

const FALLBACK =
  "the restore could not be finished (the operator finds the cause in the worker's log); try it again in a few minutes";

/**
 * One restore (`restore/<id>`). The backup is checked first, against the size and SHA-256 recorded when it was taken:
 * a missing or corrupt backup fails the restore before any database is touched. To a new database (the default), the
 * new one's server is made, the backup loaded, and only then its own workflow started, which finds the server up and
 * marks it ready. In place, a safety backup of what the database holds is taken first, then the backup is loaded over
 * it; the database reads `restoring` meanwhile.
 */
export async function restoreWorkflow(input: RestoreWorkflowInput): Promise<RestoreOutcome> {
  const { target, backupId } = input;
  const details = (s: string) =>
    setCurrentDetails(
      `**${s}**\n\nbackup \`${backupId}\` → ${target.kind === 'new' ? 'new' : 'in place'} database \`${target.databaseId}\``,
    );
  const fail = async (err: unknown, databaseStatus?: 'failed' | 'ready') => {
    const f = failureOf(err, { restoreId: input.restoreId }, FALLBACK);
    if (databaseStatus)
      await records.recordDatabaseStatus({
        databaseId: target.databaseId,
        status: databaseStatus,
        error: databaseStatus === 'failed' ? f.message : null,
      });
    details('failed');
    return asFailure(f);
  };

  details('checking the backup');
  try {
    await transfers.verifyBackup({ backupId });
  } catch (err) {
    // Nothing was touched; a new database's record, made by the api for this restore, says why it never came.
    throw await fail(err, target.kind === 'new' ? 'failed' : undefined);
  }

  if (target.kind === 'in_place') {
    await records.recordDatabaseStatus({ databaseId: target.databaseId, status: 'restoring', error: null });
    details('taking a safety backup');
    try {
      await executeChild(BACKUP_WORKFLOW, {
        workflowId: backupWorkflowId(target.safetyBackupId),
        args: [
          {
            backupId: target.safetyBackupId,
            databaseId: target.databaseId,
            orgId: input.orgId,
            trigger: 'safety' as const,
            createdBy: input.requestedBy,
          },
        ],
      });
    } catch (err) {
      // No safety copy, no restore: the data stays as it was.
      throw await fail(err, 'ready');
    }
  } else {
    details('starting the new database');
    try {
      await server.ensureDatabaseServer({ databaseId: target.databaseId });
    } catch (err) {
      throw await fail(err, 'failed');
    }
  }

  details('loading the backup');
  try {
    await transfers.restoreFromBackup({ backupId, databaseId: target.databaseId });
  } catch (err) {
    throw await fail(err, 'failed');
  }

  if (target.kind === 'in_place') {
    await records.recordDatabaseStatus({ databaseId: target.databaseId, status: 'ready', error: null });
  } else {
    const d = await records.databaseWorkflowInput({ databaseId: target.databaseId });
    await startDatabaseWorkflow(d);
  }
  details('restored');
  return {
    databaseId: target.databaseId,
    ...(target.kind === 'in_place' ? { safetyBackupId: target.safetyBackupId } : {}),
  };
}

/** The new database's own workflow, from here on its owner: it finds the server up and marks it ready. */
async function startDatabaseWorkflow(d: DatabaseWorkflowInput): Promise<void> {
  await startChild(DATABASE_WORKFLOW, {
    workflowId: databaseWorkflowId(d.databaseId),
    args: [d],
    parentClosePolicy: ParentClosePolicy.ABANDON,
  });
}
