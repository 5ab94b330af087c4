import { ActivityFailure, ApplicationFailure, log } from '@temporalio/workflow';

import type { FailureDetails } from '@activities/providers/provider';
import {
  ALLOWED_COMMANDS,
  COMMAND_FAILED,
  COMMAND_REFUSED,
  type CommandFailure,
  type CommandName,
  type CommandRefusal,
} from '@shared/contracts/deployment';
import type { DeploymentFailure, DeploymentStatus, LastFailure } from '@shared/deployments/types';

export type Phase = LastFailure['phase'];
/** lastFailure as the workflow sends it; the activity stamps its time. */
export type FailureReport = CommandFailure;

/** What the deployment was doing when a phase failed, as the words after "while". */
export const PHASE_WORDS: Record<Phase, string> = {
  build: 'building the source',
  pull: 'preparing the image',
  start: 'starting the container',
  ready: 'waiting for the app to answer',
  destroy: 'removing the deployment',
  switch: 'switching traffic to the new release',
};

const PHASE_HINTS: Record<Phase, string> = {
  build: 'Read the build log (GET /deployments/{id}/logs?stream=build), fix the source and deploy again.',
  pull: 'Check the image reference and that the image is on the engine or in a reachable registry.',
  start: 'Read the logs of the failed release; the app exited as it started.',
  ready: "Make the app listen on the deployment's port (0.0.0.0, not 127.0.0.1) and answer within the timeout.",
  destroy: 'Try the destroy again; if it keeps failing, contact the operator.',
  switch: 'The edge router did not take the new route; try again, and if it keeps failing contact the operator.',
};

/**
 * What the caller reads in `error.message` and the failed event. A non-retryable ApplicationFailure is a failure we
 * worded for the caller (bad input, a build error, an app that exited); anything else — engine, driver or network
 * text that outlived its retries — stays in the worker's log, and the caller is told what to do instead.
 */
export function failureMessage(err: unknown, phase: DeploymentFailure['phase'] | Phase): string {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  if (cause instanceof ApplicationFailure && cause.nonRetryable) return cause.message;
  log.warn('deployment failed on an unexpected error', {
    phase,
    error: cause instanceof Error ? cause.message : String(cause),
  });
  return `The deployment failed while ${PHASE_WORDS[phase]} because of an internal error; deploy again, and if it fails again read the logs or contact the operator.`;
}

/** The provider's diagnosis carried by its failure (provider.ts `failureDetails`, kept here: workflows import types only). */
function failureDetails(cause: unknown): FailureDetails | undefined {
  const details = (cause as { details?: unknown[] } | undefined)?.details?.[0] as Partial<FailureDetails> | undefined;
  return details && typeof details.instance === 'string' && Array.isArray(details.lastLines)
    ? (details as FailureDetails)
    : undefined;
}

/** The lastFailure of a release that did not get to serve: the provider's diagnosis when it gave one. */
export function failureReport(
  err: unknown,
  phase: Phase,
  command: FailureReport['command'],
  revision: number,
): FailureReport {
  const details = failureDetails(err instanceof ActivityFailure ? err.cause : err);
  return {
    phase,
    command,
    revision,
    message: failureMessage(err, phase),
    ...(details?.exitCode !== undefined ? { exitCode: details.exitCode } : {}),
    ...(details ? { lastLines: details.lastLines } : {}),
    hint: details?.hint ?? PHASE_HINTS[phase],
  };
}

/** A release that did not become ready or could not take traffic: the command that tried it fails with this. */
export class ReleaseFailed extends Error {
  constructor(readonly report: FailureReport) {
    super(report.message);
  }
}

/** Refuses `command` in `status` (or for `reason`), in words a caller can act on. */
export function refuse(command: CommandName, status: DeploymentStatus, reason?: string): ApplicationFailure {
  const allowed = [...ALLOWED_COMMANDS[status]];
  const message =
    reason ??
    `The deployment is ${status}, so it cannot ${command}; a ${status} deployment accepts ${allowed.join(', ')}.`;
  return ApplicationFailure.create({
    type: COMMAND_REFUSED,
    nonRetryable: true,
    message,
    details: [{ command, status, allowed } satisfies CommandRefusal],
  });
}

/** The failure an accepted command ends with: its update's caller reads the message and the report. */
export function commandFailed(message: string, report?: FailureReport): ApplicationFailure {
  return ApplicationFailure.create({
    type: COMMAND_FAILED,
    nonRetryable: true,
    message,
    ...(report ? { details: [report] } : {}),
  });
}
