import type { CheckpointRecord } from '../../shared/builder/types';

/** What the api needs to run a builder session's Git operations: names, IDs and inputs, no workflow code. */
export const BUILDER_GIT_PUSH_WORKFLOW = 'builderGitPushWorkflow';
export const BUILDER_GIT_IMPORT_WORKFLOW = 'builderGitImportWorkflow';

/** One push at a time per session: a second while one runs is refused by its ID. */
export const builderGitPushWorkflowId = (sessionId: string) => `builder-git/${sessionId}/push`;
export const builderGitImportWorkflowId = (importId: string) => `builder-git/import/${importId}`;

/** Failure types the api renders: refused (400, the message says why) and a remote that moved on (409). */
export const GIT_REFUSED = 'git_refused';
export const GIT_NON_FAST_FORWARD = 'git_non_fast_forward';

export interface GitImportResult {
  files: CheckpointRecord['files'];
  commit: string;
  branch: string | null;
}

export type { PushInput } from '../../activities/builder-git';
