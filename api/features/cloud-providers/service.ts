import { type Client, WorkflowFailedError } from '@temporalio/client';
import type { z } from 'zod';

import { CLOUD_CREDENTIALS, type CloudProvider } from '@shared/cloud/credentials';
import { rootCause } from '@shared/cloud/failures';
import type { CloudCredentialsSummary, CloudCredentialStore } from '@shared/cloud/store';
import type { Config } from '@shared/config';
import {
  CLOUD_CREDENTIALS_CHECK_WORKFLOW,
  type CloudCredentialsCheck,
  cloudCredentialsCheckId,
} from '@shared/contracts/cloud-credentials';
import type { DeploymentStore } from '@shared/deployments/store';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';

import { issuesOf } from '../../http/validate';

export const summaryView = (s: CloudCredentialsSummary) => ({
  provider: s.provider,
  identity: s.identity,
  regions: s.regions,
  registry: s.registry,
  verifiedAt: s.verifiedAt.toISOString(),
  updatedAt: s.updatedAt.toISOString(),
  updatedBy: s.updatedBy,
});

/**
 * An organisation's cloud credentials (docs/architecture.md, "Cloud providers"): write-only, tried by the cloud's own
 * read-only call (in an activity, through a short workflow) before they replace what was saved.
 */
export function createCloudProviderService(deps: {
  store: CloudCredentialStore;
  temporal: Client;
  deployments: Pick<DeploymentStore, 'list'>;
  config: Pick<Config, 'TEMPORAL_TASK_QUEUE'>;
}) {
  const { store } = deps;

  return {
    async put(p: Principal, provider: CloudProvider, body: unknown) {
      const parsed = CLOUD_CREDENTIALS[provider].safeParse(body);
      if (!parsed.success) {
        const issues = issuesOf(parsed.error as z.ZodError, 'body');
        const first = issues[0]!;
        throw new AppError(
          'INVALID_REQUEST',
          `Invalid body${first.path ? `.${first.path}` : ''} for ${provider}: ${first.message}`,
          { issues },
        );
      }
      const candidateId = await store.putCandidate(p.org._id, provider, parsed.data as never);
      let check: CloudCredentialsCheck;
      try {
        check = await deps.temporal.workflow.execute(CLOUD_CREDENTIALS_CHECK_WORKFLOW, {
          taskQueue: deps.config.TEMPORAL_TASK_QUEUE,
          workflowId: cloudCredentialsCheckId(candidateId),
          args: [candidateId],
          workflowExecutionTimeout: '3 minutes',
        });
      } catch (err) {
        await store.dropCandidate(candidateId);
        // The activity's tries all met a network error or an outage of the cloud's API.
        if (!(err instanceof WorkflowFailedError)) throw err;
        const cause = rootCause(err);
        throw new AppError(
          'CLOUD_UNREACHABLE',
          `Slipway could not reach ${provider} to try the credentials, so nothing was saved (${String((cause as Error)?.message ?? cause).slice(0, 200)}). Try again in a minute; if it keeps failing, the operator should check that this server reaches the cloud's API.`,
          { provider },
        );
      }
      if (!check.ok)
        throw new AppError(
          'CLOUD_CREDENTIALS_REFUSED',
          `${provider} refused the credentials, so nothing was saved: ${check.message}${check.hint ? ` ${check.hint}` : ''}`,
          { provider, reason: check.type },
        );
      return summaryView(await store.promote(candidateId, p.user._id));
    },

    async get(p: Principal, provider: CloudProvider) {
      const s = await store.summary(p.org._id, provider);
      if (!s) throw notFound(provider);
      return summaryView(s);
    },

    async list(p: Principal) {
      return (await store.summaries(p.org._id)).map(summaryView);
    },

    /** Refused while deployments run on the cloud: without credentials they could be neither changed nor destroyed. */
    async remove(p: Principal, provider: CloudProvider) {
      const { total } = await deps.deployments.list({ orgId: p.org._id, provider, limit: 1, offset: 0 });
      if (total > 0)
        throw new AppError(
          'CONFLICT',
          `${total} deployment${total === 1 ? '' : 's'} of this organisation run on ${provider}; destroy ${total === 1 ? 'it' : 'them'} first (GET /platform/deployments?provider=${provider}), or replace the credentials with a PUT instead.`,
          { provider, deployments: total },
        );
      if (!(await store.remove(p.org._id, provider))) throw notFound(provider);
    },
  };
}

const notFound = (provider: CloudProvider) =>
  new AppError(
    'CLOUD_CREDENTIALS_NOT_FOUND',
    `The organisation has no credentials for ${provider}; set them with PUT /platform/providers/${provider}/credentials.`,
    { provider },
  );

export type CloudProviderService = ReturnType<typeof createCloudProviderService>;
