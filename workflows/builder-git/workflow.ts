import { proxyActivities } from '@temporalio/workflow';

import type { BuilderGitActivities } from '@activities/builder-git';
import type { GitImportInput, GitImportResult, PushInput, PushResult } from '@shared/contracts/builder-git';

// Bounded by GIT_CLONE_TIMEOUT_S per git command inside; failures that say what was wrong are not retried.
const { builderGitPush, builderGitImport } = proxyActivities<BuilderGitActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumAttempts: 2 },
});

/** Git runs in the worker, never in the api (the source deploys' rules apply there). */
export function builderGitPushWorkflow(input: PushInput): Promise<PushResult> {
  return builderGitPush(input);
}

export function builderGitImportWorkflow(input: GitImportInput): Promise<GitImportResult> {
  return builderGitImport(input);
}
