import type { CheckpointRecord } from '../builder/types';

/**
 * The builder Git workflows' contract: what the api needs to run a builder session's Git operations (names, IDs,
 * inputs, failure types), no workflow code. The names are the exported functions' names in
 * workflows/builder-git/workflow.ts.
 */
export const BUILDER_GIT_PUSH_WORKFLOW = 'builderGitPushWorkflow';
export const BUILDER_GIT_IMPORT_WORKFLOW = 'builderGitImportWorkflow';

/** One push at a time per session: a second while one runs is refused by its ID. */
export const builderGitPushWorkflowId = (sessionId: string) => `builder-git/${sessionId}/push`;
export const builderGitImportWorkflowId = (importId: string) => `builder-git/import/${importId}`;

/** Failure types the api renders: refused (400, the message says why) and a remote that moved on (409). */
export const GIT_REFUSED = 'git_refused';
export const GIT_NON_FAST_FORWARD = 'git_non_fast_forward';

export interface PushInput {
  orgId: string;
  sessionId: string;
  checkpointId: string;
  remoteUrl: string;
  branch: string;
  message: string;
  tokenSecretId?: string;
  force: boolean;
  author: { name: string; email: string };
}

export interface PushResult {
  commit: string;
  pushed: boolean;
}

export interface GitImportInput {
  orgId: string;
  repoUrl: string;
  branch?: string;
  tokenSecretId?: string;
}

export interface GitImportResult {
  files: CheckpointRecord['files'];
  commit: string;
  branch: string | null;
}
