/**
 * The question workflow's contract: what the api needs to start one answer to a question asked of a database source
 * (docs/architecture.md, "Database sources"); no workflow code.
 */
import type { SearchAttributePair } from '@temporalio/common';

import { SEARCH_ATTRIBUTES } from '../constants';

export const SOURCE_QUESTION_WORKFLOW = 'sourceQuestionWorkflow';

/** One per question: its answer is written once, by that run. */
export const sourceQuestionWorkflowId = (questionId: string) => `source-question/${questionId}`;

export interface SourceQuestionInput {
  questionId: string;
  orgId: string;
  sourceId: string;
}

/** How the answer ended; the question's record holds the rest. */
export interface SourceQuestionOutcome {
  status: 'answered' | 'blocked' | 'failed';
}

export function sourceQuestionVisibility(q: { orgId: string; projectId: string | null; sourceName: string }) {
  const typedSearchAttributes: SearchAttributePair[] = [
    { key: SEARCH_ATTRIBUTES.orgId, value: q.orgId },
    ...(q.projectId ? [{ key: SEARCH_ATTRIBUTES.projectId, value: q.projectId }] : []),
  ];
  return { typedSearchAttributes, staticSummary: `question to database source ${q.sourceName}` };
}
