/**
 * The cloud read's contract (docs/architecture.md, "Cloud providers"): what the api reads of a cloud deployment that
 * only the cloud holds (its app's logs, its service's state) is read by an activity on the cloud's SDK, through this short workflow, so
 * the api never holds an organisation's cloud credentials.
 */
import type { CloudProvider } from '../cloud/credentials';
import type { LogQuery } from '../engine/observe';

export const CLOUD_LOGS_WORKFLOW = 'cloudLogsWorkflow';
export const CLOUD_STATUS_WORKFLOW = 'cloudStatusWorkflow';

export const cloudLogsWorkflowId = (deploymentId: string, requestId: string) =>
  `cloud-logs/${deploymentId}/${requestId}`;
export const cloudStatusWorkflowId = (deploymentId: string, requestId: string) =>
  `cloud-status/${deploymentId}/${requestId}`;

export interface CloudLogsInput {
  deploymentId: string;
  orgId: string;
  provider: CloudProvider;
  region: string;
  query: LogQuery;
}

export type CloudStatusInput = Omit<CloudLogsInput, 'query'>;
