import { proxyActivities } from '@temporalio/workflow';

import type { DeploymentActivities } from '@activities/deployment';
import type { CloudServiceStatus } from '@activities/providers/cloud';
import type { CloudLogsInput, CloudStatusInput } from '@shared/contracts/cloud-read';
import type { ProviderLogLine } from '@shared/engine/observe';

// A reader waits for the answer: a short budget, a few tries for a cloud that throttles.
const { cloudLogs, cloudStatus } = proxyActivities<DeploymentActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '500 milliseconds',
    maximumAttempts: 3,
    nonRetryableErrorTypes: ['CloudCredentialsRefused', 'CloudRequestRefused'],
  },
});

/** A cloud deployment's app logs, read with the organisation's credentials in an activity. */
export async function cloudLogsWorkflow(input: CloudLogsInput): Promise<ProviderLogLine[]> {
  return cloudLogs(input);
}

/** A cloud deployment's service as its cloud reports it now. */
export async function cloudStatusWorkflow(input: CloudStatusInput): Promise<CloudServiceStatus> {
  return cloudStatus(input);
}
