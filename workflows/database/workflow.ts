import { allHandlersFinished, condition, setCurrentDetails, setHandler } from '@temporalio/workflow';

import {
  databaseStatusQuery,
  type DatabaseWorkflowInput,
  deleteDatabaseSignal,
  deleteDatabaseUpdate,
} from '@shared/contracts/database';
import type { DatabaseStatus } from '@shared/databases/types';

import { records, server } from './activities';
import { asFailure, failureOf } from './failures';

const MADE_FALLBACK =
  "the database's server could not be started on the engine's host (the operator finds the cause in the worker's " +
  'log); delete the database and create it again';
const REMOVED_FALLBACK =
  "the database's server or storage could not be removed (the operator finds the cause in the worker's log); " +
  'delete it again in a few minutes';

/**
 * One database, for as long as it exists (docs/architecture.md, "Databases"): makes its storage and starts its server,
 * says so in its record (`ready`, or `failed` with what to do), then waits for `deleteDatabase`, removes the server,
 * its storage, its backups and then the record, and answers. Backups and restores run as workflows of their own.
 */
export async function databaseWorkflow(input: DatabaseWorkflowInput): Promise<void> {
  const { databaseId } = input;
  let status: DatabaseStatus = 'creating';
  let error: string | null = null;
  let deleteAsked = false;
  let rounds = 0;
  let lastFailure: { type?: string; message: string } | undefined;
  let deleted = false;

  setHandler(databaseStatusQuery, () => ({ status, error }));
  setHandler(deleteDatabaseSignal, () => {
    if (!deleted) deleteAsked = true;
  });
  setHandler(deleteDatabaseUpdate, async (): Promise<{ deleted: true }> => {
    if (deleted) return { deleted: true };
    deleteAsked = true;
    const round = rounds;
    await condition(() => rounds > round);
    if (lastFailure) throw asFailure(lastFailure);
    return { deleted: true };
  });

  const about = `${input.engine} database \`${databaseId}\` (${input.sizeGb} GB) of org \`${input.orgId}\``;
  async function record(next: DatabaseStatus, why: string | null): Promise<void> {
    await records.recordDatabaseStatus({ databaseId, status: next, error: why });
    status = next;
    error = why;
    const lines = [`**${status}**`, about];
    if (why) lines.push(`\`\`\`\n${why.replaceAll('`', "'")}\n\`\`\``);
    setCurrentDetails(lines.join('\n\n'));
  }

  setCurrentDetails(`**creating**\n\n${about}`);
  const failedToMake = await server.ensureDatabaseServer({ databaseId }).then(
    () => null,
    (err: unknown) => failureOf(err, { databaseId }, MADE_FALLBACK).message,
  );
  await record(failedToMake ? 'failed' : 'ready', failedToMake);

  for (;;) {
    await condition(() => deleteAsked);
    deleteAsked = false;
    await record('deleting', null);
    try {
      await server.removeDatabaseServer({ databaseId, volumeId: input.volumeId });
      await records.removeDatabaseBackups({ databaseId });
      await records.removeDatabaseRecord({ databaseId });
      lastFailure = undefined;
      deleted = true;
      rounds++;
      await condition(allHandlersFinished);
      return;
    } catch (err) {
      lastFailure = failureOf(err, { databaseId }, REMOVED_FALLBACK);
      await record('failed', lastFailure.message);
      deleteAsked = false;
      rounds++;
    }
  }
}
