import { patched, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';

import { SEARCH_ATTRIBUTES } from '../../shared/constants';
import type { DeploymentStatus } from '../../shared/deployments/types';
import type { Entity, RecordExtra } from './entity';
import { PHASE_WORDS } from './failures';
import { PATCHES } from './patches';

/**
 * What the Temporal UI lists a deployment under: the record's status, or `destroyed` once its destroy began (the
 * record is hidden by then, and a closed workflow stays listed for the namespace's retention).
 */
export type VisibleStatus = DeploymentStatus | 'destroyed';

type Shown = Pick<Entity, 'input' | 'state'>;

/** The failure the record now shows, in one line; undefined when this write leaves it as it was. */
function failureOf(extra: RecordExtra): string | null | undefined {
  const { lastFailure, error } = extra;
  if (lastFailure)
    return `the ${lastFailure.command} of release ${lastFailure.revision} failed while ${PHASE_WORDS[lastFailure.phase]}: ${lastFailure.message}${lastFailure.hint ? `\n${lastFailure.hint}` : ''}`;
  if (error) return `the deploy failed while ${PHASE_WORDS[error.phase]}: ${error.message}`;
  // A write that clears the failure (the release serves again) says so with null.
  if (lastFailure === null || error === null) return null;
  return undefined;
}

/**
 * Sets the current details on the workflow's page. A run that continued the deployment as new has no summary (user
 * metadata stays with the run the api started), so its details name the app themselves.
 */
function setDetails({ input, state }: Shown): void {
  const heading = input.resume && input.summary ? `${input.summary}\n\n` : '';
  setCurrentDetails(`${heading}${state.details ?? `**${state.status}**`}`);
}

/** The current details: the status and the last failure's cause (no command, so never behind a patch). */
export function showDetails(e: Shown, status: VisibleStatus, message: string, extra: RecordExtra = {}): void {
  const { state } = e;
  const failure = failureOf(extra);
  if (failure !== undefined) state.failure = failure ?? undefined;
  const shown = state.failure && status !== 'destroyed' ? state.failure : undefined;
  // A failed deploy's message is its failure's: said once.
  const lines = [shown?.includes(message) ? `**${status}**` : `**${status}**: ${message}`];
  if (shown) lines.push(`Last failure: ${shown}`);
  state.details = lines.join('\n\n');
  setDetails(e);
}

/**
 * Shows a status change where an operator looks first, the Temporal UI: the DeploymentStatus search attribute (so
 * `DeploymentStatus="failed"` lists the failed ones, where the workflow itself is "Running" whatever its deployment
 * does) and the current details. The attribute is a command, so it waits for the patch: histories recorded before
 * it replay without one.
 */
export function showStatus(e: Shown, status: VisibleStatus, message: string, extra: RecordExtra = {}): void {
  showDetails(e, status, message, extra);
  if (patched(PATCHES.visibleStatus)) upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.status, value: status }]);
}

/** The details of a run that continues a deployment: they live in a run's memory, not on the server. */
export const showResumed = (e: Shown): void => setDetails(e);
