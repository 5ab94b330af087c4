import { executeChild, setCurrentDetails, uuid4 } from '@temporalio/workflow';

import { BACKUP_WORKFLOW, backupWorkflowId, type ScheduledBackupInput } from '@shared/contracts/database';

import { records } from './activities';

/**
 * What a database's backup schedule starts each time it fires: a backup (`backup/<id>`), then retention over the
 * schedule's backups, decided from our records. A backup that failed removes nothing: retention runs only after a
 * good one, and never removes the newest good backup.
 */
export async function scheduledBackupWorkflow(
  input: ScheduledBackupInput,
): Promise<{ backupId: string; removed: string[] }> {
  const backupId = uuid4();
  setCurrentDetails(`**backing up**\n\ndatabase \`${input.databaseId}\`, backup \`${backupId}\``);
  await executeChild(BACKUP_WORKFLOW, {
    workflowId: backupWorkflowId(backupId),
    args: [
      {
        backupId,
        databaseId: input.databaseId,
        orgId: input.orgId,
        trigger: 'schedule' as const,
        createdBy: 'system',
        at: Date.now(),
      },
    ],
  });
  const removed = await records.applyRetention({ databaseId: input.databaseId, retain: input.retain, now: Date.now() });
  setCurrentDetails(`**done**\n\nbackup \`${backupId}\`; retention removed ${removed.length}`);
  return { backupId, removed };
}
