import { proxyActivities } from '@temporalio/workflow';

import type { DeploymentActivities } from '@activities/deployment';
import type { CloudCredentialsCheck } from '@shared/contracts/cloud-credentials';

// The api waits for the answer: a short budget, a few tries for a cloud that throttles or blips.
const { cloudCheckCredentials } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '45 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 3 },
});

/** Tries credentials a PUT gave (by their candidate's ID) with the cloud's read-only call. */
export async function cloudCredentialsCheckWorkflow(candidateId: string): Promise<CloudCredentialsCheck> {
  return cloudCheckCredentials(candidateId);
}
