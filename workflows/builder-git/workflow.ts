import { proxyActivities } from '@temporalio/workflow';

import type { BuilderGitActivities, PushInput } from '../../activities/builder-git';
import type { GitImportResult } from './commands';

// Bounded by GIT_CLONE_TIMEOUT_S per git command inside; failures that say what was wrong are not retried.
const { builderGitPush, builderGitImport } = proxyActivities<BuilderGitActivities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumAttempts: 2 },
});

/** Git runs in the worker, never in the api (the source deploys' rules apply there). */
export function builderGitPushWorkflow(input: PushInput): Promise<{ commit: string; pushed: boolean }> {
  return builderGitPush(input);
}

export function builderGitImportWorkflow(input: {
  orgId: string;
  repoUrl: string;
  branch?: string;
  tokenSecretId?: string;
}): Promise<GitImportResult> {
  return builderGitImport(input);
}
