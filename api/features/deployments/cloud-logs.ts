import { randomUUID } from 'node:crypto';

import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

import { isCloudProvider } from '@shared/cloud/credentials';
import type { Config } from '@shared/config';
import { CLOUD_LOGS_WORKFLOW, cloudLogsWorkflowId } from '@shared/contracts/cloud-read';
import type { DeploymentRecord } from '@shared/deployments/types';
import type { LogQuery, ProviderLogLine } from '@shared/engine/observe';
import { AppError } from '@shared/errors';

/**
 * A cloud deployment's app logs, read from the cloud's log service (Cloud Logging, Log Analytics, CloudWatch Logs) by
 * the worker, which alone opens the organisation's credentials. The cloud's refusal (no log workspace configured,
 * credentials revoked) is the caller's to fix and says how; a cloud that does not answer is a 502.
 */
export function createCloudLogReader(deps: { temporal: Client; config: Pick<Config, 'TEMPORAL_TASK_QUEUE'> }) {
  return async (d: DeploymentRecord, query: LogQuery): Promise<ProviderLogLine[]> => {
    if (!isCloudProvider(d.provider)) return [];
    try {
      return await deps.temporal.workflow.execute(CLOUD_LOGS_WORKFLOW, {
        taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
        workflowId: cloudLogsWorkflowId(d._id, randomUUID()),
        args: [{ deploymentId: d._id, orgId: d.orgId, provider: d.provider, region: d.region!, query }],
        workflowExecutionTimeout: '2 minutes',
      });
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      let cause: unknown = err.cause;
      while (cause instanceof Error && !(cause instanceof ApplicationFailure && cause.nonRetryable) && cause.cause)
        cause = cause.cause;
      const details = (cause as ApplicationFailure).details?.[0] as { message?: string; hint?: string } | undefined;
      if (cause instanceof ApplicationFailure && cause.nonRetryable && details?.message)
        throw new AppError('CONFLICT', `${details.message}${details.hint ? ` ${details.hint}` : ''}`, {
          provider: d.provider,
        });
      throw new AppError('CLOUD_UNREACHABLE', `${d.provider}'s log service did not answer; try again in a minute.`, {
        provider: d.provider,
      });
    }
  };
}
