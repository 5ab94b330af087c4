import { patched, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';

import { SEARCH_ATTRIBUTES } from '../../shared/constants';
import type { DeploymentStatus } from '../../shared/deployments/types';
import type { RecordExtra } from './entity';
import { PHASE_WORDS } from './failures';
import { PATCHES } from './patches';
import type { EntityState } from './state';

/**
 * What the Temporal UI lists a deployment under: the record's status, or `destroyed` once its destroy began (the
 * record is hidden by then, and a closed workflow stays listed for the namespace's retention).
 */
export type VisibleStatus = DeploymentStatus | 'destroyed';

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

/** The current details on the workflow's page: the status and the last failure's cause (no command: never patched). */
export function showDetails(state: EntityState, status: VisibleStatus, message: string, extra: RecordExtra = {}) {
  const failure = failureOf(extra);
  if (failure !== undefined) state.failure = failure ?? undefined;
  const shown = state.failure && status !== 'destroyed' ? state.failure : undefined;
  // A failed deploy's message is its failure's: said once.
  const lines = [shown?.includes(message) ? `**${status}**` : `**${status}**: ${message}`];
  if (shown) lines.push(`Last failure: ${shown}`);
  state.details = lines.join('\n\n');
  setCurrentDetails(state.details);
}

/**
 * Shows a status change where an operator looks first, the Temporal UI: the DeploymentStatus search attribute (so
 * `DeploymentStatus="failed"` lists the failed ones, where the workflow itself is "Running" whatever its deployment
 * does) and the current details. The attribute is a command, so it waits for the patch: histories recorded before
 * it replay without one.
 */
export function showStatus(state: EntityState, status: VisibleStatus, message: string, extra: RecordExtra = {}) {
  showDetails(state, status, message, extra);
  if (patched(PATCHES.visibleStatus)) upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.status, value: status }]);
}

/** The details of a run that continues a deployment: they live in the run's memory, not on the server. */
export function showResumed(state: EntityState): void {
  setCurrentDetails(state.details ?? `**${state.status}**`);
}
