import { AI_ERROR_CODES } from '../ai/errors';
import type { ChatMessage } from '../ai/types';
import type { FileEntry } from '../builder/types';

/**
 * The builder turn workflow's contract: what the api needs to start a turn and read its end (type name, ID, input,
 * result), and what the turn's activities share with it, no workflow code (docs/architecture.md, "Layers and where
 * code goes"). The name is the exported function's name in workflows/builder-turn/workflow.ts, which the worker
 * registers.
 */
export const BUILDER_TURN_WORKFLOW = 'builderTurnWorkflow';

/** One workflow per turn; one running turn per session is the store's marker (shared/builder/store.ts). */
export const builderTurnWorkflowId = (sessionId: string, turnId: string) => `builder-turn/${sessionId}/${turnId}`;

export interface TurnInput {
  turnId: string;
  sessionId: string;
  orgId: string;
  userId: string;
  content: string;
  providerId: string;
  model: string;
}

/** Why a turn ended early: an AI error class (shared/ai/errors.ts), a provider gone, or our own failure. */
export const TURN_ERROR_CODES = [...AI_ERROR_CODES, 'provider_missing', 'internal'] as const;
export type TurnErrorCode = (typeof TURN_ERROR_CODES)[number];

export interface TurnError {
  code: TurnErrorCode;
  message: string;
}

/** What a turn changed so far: path → the new content's address, or null for a deletion. */
export type TurnChanges = Record<string, FileEntry | null>;

export interface TurnResult {
  turnId: string;
  status: 'completed' | 'failed';
  messageId: string;
  checkpointId: string | null;
  error: TurnError | null;
}

/** The conversation a step sends, carried by the workflow from step to step. */
export type Transcript = ChatMessage[];
