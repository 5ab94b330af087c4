import { ActivityFailure, ApplicationFailure, proxyActivities } from '@temporalio/workflow';

import type { BuilderTurnActivities } from '@activities/builder-turn';
import {
  TURN_ERROR_CODES,
  type TurnChanges,
  type TurnError,
  type TurnErrorCode,
  type TurnInput,
  type TurnResult,
} from '@shared/contracts/builder-turn';

/** Tool rounds in one turn: a model that keeps calling tools is stopped here and the turn ends with what it did. */
const MAX_STEPS = 12;

const { beginTurn, finishTurn } = proxyActivities<BuilderTurnActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 10 },
});

// One attempt: the adapter already retried rate limits and outages before the first event, and a retry after
// streaming would show the text twice. Heartbeats (one per event) notice a worker that died mid-answer.
const { modelStep } = proxyActivities<BuilderTurnActivities>({
  startToCloseTimeout: '15 minutes',
  heartbeatTimeout: '3 minutes',
  retry: { maximumAttempts: 1 },
});

function turnError(err: unknown): TurnError {
  const cause = err instanceof ActivityFailure ? err.cause : err;
  // Only our typed failures carry their words to the user; anything else (a database error) is ours to log.
  if (cause instanceof ApplicationFailure && (TURN_ERROR_CODES as readonly string[]).includes(cause.type ?? ''))
    return { code: cause.type as TurnErrorCode, message: cause.message };
  return { code: 'internal', message: 'The turn failed on our side; send the message again.' };
}

/**
 * One model turn of a builder session (docs/architecture.md, "AI builder"): the model sees the files and the
 * conversation, edits through tools, and the turn ends with a checkpoint of what it changed and the assistant's
 * message. Every event is stored as it happens, so the HTTP stream tails the store and a client can reconnect; whatever
 * fails, the turn ends (with a typed error) and frees the session for the next message.
 */
export async function builderTurnWorkflow(turn: TurnInput): Promise<TurnResult> {
  let changes: TurnChanges = {};
  let text = '';
  let error: TurnError | null = null;
  try {
    const begun = await beginTurn(turn);
    let transcript = begun.transcript;
    for (let step = 0; step < MAX_STEPS; step++) {
      const r = await modelStep({ turn, step, base: begun.base, transcript, changes });
      transcript = r.transcript;
      changes = r.changes;
      if (r.text) text = text ? `${text}\n\n${r.text}` : r.text;
      if (!r.more) break;
      if (step === MAX_STEPS - 1)
        text = `${text}${text ? '\n\n' : ''}(Stopped after ${MAX_STEPS} rounds of tool calls; send another message to go on.)`;
    }
  } catch (err) {
    error = turnError(err);
  }
  return finishTurn({ turn, changes, text, error });
}
