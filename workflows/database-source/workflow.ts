import { ActivityFailure, proxyActivities } from '@temporalio/workflow';

import type { DatabaseSourceActivities } from '@activities/database-source';
import type { SourceQuestionInput, SourceQuestionOutcome } from '@shared/contracts/database-source';

/**
 * One attempt: a second would call the model again (and pay for it) for an answer the first may have written. The
 * AI client retries a rate limit or an overload itself, within the call.
 */
const { answerQuestion } = proxyActivities<DatabaseSourceActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 1 },
});

const { failQuestion } = proxyActivities<DatabaseSourceActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { maximumInterval: '10 seconds', maximumAttempts: 20 },
});

/** A question asked of a database source: answered once, or marked failed saying why; never left running. */
export async function sourceQuestionWorkflow(input: SourceQuestionInput): Promise<SourceQuestionOutcome> {
  try {
    return await answerQuestion(input);
  } catch (err) {
    if (!(err instanceof ActivityFailure)) throw err;
    const why = err.cause?.message ?? err.message;
    await failQuestion(input.questionId, `the answer could not be completed: ${why}; ask again`);
    return { status: 'failed' };
  }
}
