import { ActivityFailure, ApplicationFailure, log } from '@temporalio/workflow';

import { DATABASE_FAILURES } from '@shared/contracts/database';
import { VOLUME_FAILURES } from '@shared/contracts/volume';

const OURS: readonly string[] = [
  ...Object.values(DATABASE_FAILURES),
  ...Object.values(VOLUME_FAILURES),
  'DatabaseInvalid',
  'DatabaseUnknown',
  'BackupUnknown',
  'hostFull',
  'sizeMismatch',
  'notOurs',
  'inUse',
];

/** Our fault's type and message, or `fallback` when the cause was not ours to word (logged for the operator). */
export function failureOf(
  err: unknown,
  what: Record<string, string>,
  fallback: string,
): { type?: string; message: string } {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && OURS.includes(cause.type ?? '')) {
    return { type: cause.type ?? undefined, message: cause.message };
  }
  log.warn('a database step failed after its retries', { ...what, error: String(cause) });
  return { message: fallback };
}

/** The failure an update or a workflow ends with: our words, never the engine's or the driver's. */
export const asFailure = (f: { type?: string; message: string }) =>
  ApplicationFailure.create({ type: f.type ?? 'DatabaseStepFailed', message: f.message, nonRetryable: true });
