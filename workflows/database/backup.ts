import { setCurrentDetails } from '@temporalio/workflow';

import type { BackupOutcome, BackupWorkflowInput } from '@shared/contracts/database';

import { records, transfers } from './activities';
import { asFailure, failureOf } from './failures';

const FALLBACK =
  "the backup could not be taken (the operator finds the cause in the worker's log); take another in a few minutes";

/**
 * One backup or snapshot (`backup/<id>`): recorded `running`, the engine's dump streamed to the object store, then
 * recorded `complete` with its size and SHA-256, or `failed` with no object left. A worker killed mid-dump leaves an
 * unfinished multipart upload, never an object; the next attempt aborts it and dumps again, and the backup completes
 * once.
 */
export async function backupWorkflow(input: BackupWorkflowInput): Promise<BackupOutcome> {
  const { backupId } = input;
  setCurrentDetails(`**running**\n\n${input.trigger} backup \`${backupId}\` of database \`${input.databaseId}\``);
  await records.startBackupRecord({
    backupId,
    databaseId: input.databaseId,
    trigger: input.trigger,
    createdBy: input.createdBy,
    ...(input.at !== undefined ? { at: input.at } : {}),
  });
  let outcome: BackupOutcome;
  try {
    outcome = await transfers.dumpToObjectStore({ backupId });
  } catch (err) {
    const f = failureOf(err, { backupId }, FALLBACK);
    await records.finishBackup({ backupId, status: 'failed', error: f.message });
    setCurrentDetails(`**failed**\n\n${f.message.replaceAll('`', "'")}`);
    throw asFailure(f);
  }
  await records.finishBackup({ backupId, status: 'complete', sizeBytes: outcome.sizeBytes, sha256: outcome.sha256 });
  setCurrentDetails(`**complete**\n\n${outcome.sizeBytes} bytes, SHA-256 \`${outcome.sha256}\``);
  return outcome;
}
