import { patched, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';

import { SEARCH_ATTRIBUTES } from '@shared/constants';
import type { DeploymentStatus } from '@shared/deployments/types';

import type { Entity, RecordExtra } from './entity';
import { PHASE_WORDS } from './failures';
import { PATCHES } from './patches';

/**
 * What the Temporal UI lists a deployment under: the record's status, or `destroyed` once its destroy began (the
 * record is hidden by then, and a closed workflow stays listed for the namespace's retention).
 */
export type VisibleStatus = DeploymentStatus | 'destroyed';

type Shown = Pick<Entity, 'input' | 'state'>;

/** Longest text of one block: a failure's message carries the app's last log lines. */
const BLOCK_MAX_CHARS = 2000;

/**
 * Text that may hold a tenant's words (its app's output, its repository's URL) as a Markdown code block, which the
 * UI shows literally: no link, image or HTML of theirs is rendered on an operator's screen. The fence is longer than
 * any run of backticks inside, so nothing in the text can close it.
 */
export function literal(text: string): string {
  const clipped = text.length > BLOCK_MAX_CHARS ? `${text.slice(0, BLOCK_MAX_CHARS)}…` : text;
  const longest = Math.max(0, ...(clipped.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}\n${clipped}\n${fence}`;
}

/** The failure the record now shows, as the details say it; undefined when this write leaves it as it was. */
function failureOf(extra: RecordExtra): string | null | undefined {
  const { lastFailure: f, error } = extra;
  if (f)
    return `Last failure: the ${f.command} of release ${f.revision} failed while ${PHASE_WORDS[f.phase]}.\n\n${literal(f.hint ? `${f.message}\n\n${f.hint}` : f.message)}`;
  if (error) return `Last failure: the deploy failed while ${PHASE_WORDS[error.phase]}.\n\n${literal(error.message)}`;
  // A write that clears the failure (the release serves again) says so with null.
  if (f === null || error === null) return null;
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
  const lines = [`**${status}**`];
  // A failed deploy's message is its failure's: said once.
  if (!shown?.includes(message)) lines.push(literal(message));
  if (shown) lines.push(shown);
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
