import type { CloudProvider } from './credentials';

/**
 * What the user reads of a cloud failure: our words, the cloud's reason quoted, and what to do next. A cloud adapter
 * throws it as `details[0]` of a non-retryable ApplicationFailure (activities/providers/cloud.ts `cloudFailure`);
 * the workflow, the credentials check and the api's cloud reads read it back here.
 */
export interface CloudFailureDetails {
  provider: CloudProvider;
  message: string;
  hint: string;
}

/** CloudFailureDetails of a failure thrown by a cloud activity (pass `ActivityFailure.cause`), or undefined. */
export function cloudFailureDetails(cause: unknown): CloudFailureDetails | undefined {
  const d = (cause as { details?: unknown[] } | undefined)?.details?.[0] as Partial<CloudFailureDetails> | undefined;
  return d && typeof d.message === 'string' && typeof d.hint === 'string' && typeof d.provider === 'string'
    ? (d as CloudFailureDetails)
    : undefined;
}

/**
 * The error an activity threw, from the chain Temporal wraps it in (a WorkflowFailedError's cause is the workflow's
 * ActivityFailure, whose cause is the activity's own failure).
 */
export function rootCause(err: unknown): unknown {
  let cause = err;
  while (cause instanceof Error && cause.cause) cause = cause.cause;
  return cause;
}
