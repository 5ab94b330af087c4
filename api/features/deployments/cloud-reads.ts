import { randomUUID } from 'node:crypto';

import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';

import type { CloudServiceStatus } from '@activities/providers/cloud';
import { type CloudProvider, isCloudProvider } from '@shared/cloud/credentials';
import { cloudFailureDetails, rootCause } from '@shared/cloud/failures';
import type { Config } from '@shared/config';
import {
  CLOUD_LOGS_WORKFLOW,
  CLOUD_STATUS_WORKFLOW,
  cloudLogsWorkflowId,
  cloudStatusWorkflowId,
} from '@shared/contracts/cloud-read';
import type { DeploymentRecord } from '@shared/deployments/types';
import type { DeploymentHealth, LogQuery, OverallHealth, ProviderLogLine } from '@shared/engine/observe';
import { AppError } from '@shared/errors';

/**
 * What only a cloud holds of its deployments, read by the worker, which alone opens the organisation's credentials:
 * the app's logs from the cloud's log service (Cloud Logging, Log Analytics, CloudWatch Logs), and the service's state
 * as the health of the deployment. The cloud's refusal (no log workspace configured, credentials revoked) is the
 * caller's to fix and says how; a cloud that does not answer is a 502.
 */
export function createCloudReader(deps: { temporal: Client; config: Pick<Config, 'TEMPORAL_TASK_QUEUE'> }) {
  async function read<T>(d: DeploymentRecord, what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof WorkflowFailedError)) throw err;
      const cause = rootCause(err);
      const details = cloudFailureDetails(cause);
      if (cause instanceof ApplicationFailure && cause.nonRetryable && details)
        throw new AppError('CONFLICT', `${details.message}${details.hint ? ` ${details.hint}` : ''}`, {
          provider: d.provider,
        });
      throw new AppError('CLOUD_UNREACHABLE', `${d.provider}'s ${what} did not answer; try again in a minute.`, {
        provider: d.provider,
      });
    }
  }
  const options = (id: string) => ({
    taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
    workflowId: id,
    workflowExecutionTimeout: '2 minutes',
  });
  const target = (d: DeploymentRecord & { provider: CloudProvider }) => ({
    deploymentId: d._id,
    orgId: d.orgId,
    provider: d.provider,
    region: d.region!,
  });

  return {
    async logs(d: DeploymentRecord, query: LogQuery): Promise<ProviderLogLine[]> {
      if (!isCloud(d)) return [];
      return read(d, 'log service', () =>
        deps.temporal.workflow.execute(CLOUD_LOGS_WORKFLOW, {
          ...options(cloudLogsWorkflowId(d._id, randomUUID())),
          args: [{ ...target(d), query }],
        }),
      );
    },

    /**
     * The deployment's health as its cloud reports its service: every replica it asked for running is healthy, fewer
     * (or a rollout in progress) degraded, none serving unhealthy. A cloud probes its instances itself and reports no
     * probe per instance, so `instances` is empty.
     */
    async health(d: DeploymentRecord): Promise<DeploymentHealth> {
      if (!isCloud(d)) return { overall: 'unhealthy', instances: [], at: new Date().toISOString() };
      const s = await read<CloudServiceStatus>(d, 'API', () =>
        deps.temporal.workflow.execute(CLOUD_STATUS_WORKFLOW, {
          ...options(cloudStatusWorkflowId(d._id, randomUUID())),
          args: [target(d)],
        }),
      );
      const overall: OverallHealth =
        s.phase === 'stopped'
          ? 'stopped'
          : s.phase === 'serving' && s.runningReplicas >= s.desiredReplicas
            ? 'healthy'
            : s.phase === 'serving' || s.phase === 'deploying'
              ? 'degraded'
              : 'unhealthy';
      return { overall, instances: [], at: s.at };
    },
  };
}

const isCloud = (d: DeploymentRecord): d is DeploymentRecord & { provider: CloudProvider } =>
  isCloudProvider(d.provider);
