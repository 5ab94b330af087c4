import { z } from 'zod';

import { CLOUD_CREDENTIALS, CloudProvider } from '@shared/cloud/credentials';

import { defineTool, DESTRUCTIVE, Next, READ, type ToolDef } from '../../mcp/tool';
import { providerAvailability } from '../deployments/providers';
import { Providers } from '../deployments/schemas.responses';
import type { CloudProvidersContext } from './compose';
import { CloudCredentialsSummary } from './schemas';

/**
 * The credentials as the tool takes them: an object checked against the shape of the cloud `provider` names, so a
 * wrong field is named by its path (a union of the three shapes would only say "invalid input").
 */
const SetCredentialsInput = z
  .object({
    provider: CloudProvider,
    credentials: z.record(z.string(), z.unknown()).meta({
      description:
        'The cloud’s credentials, as PUT /platform/providers/{provider}/credentials takes them (CloudCredentialsRequest in ' +
        'the OpenAPI document). cloud_a_run: { serviceAccountKey (the key JSON as downloaded), regions, registry? }. ' +
        'cloud_b_container_apps: { tenantId, clientId, clientSecret, subscriptionId, resourceGroup, environmentId, ' +
        'logAnalyticsWorkspaceId?, regions, registry? }. cloud_c_ecs_fargate: { accessKeyId, secretAccessKey, ' +
        'sessionToken?, roleArn?, externalId?, cluster, subnets, securityGroups, executionRoleArn, assignPublicIp?, ' +
        'loadBalancer: { listenerArn, vpcId, hostSuffix, scheme? }, regions, registry? }. registry: { repository, ' +
        'username?, password? }, where source deploys push their image.',
    }),
  })
  .strict()
  .superRefine(({ provider, credentials }, ctx) => {
    const checked = CLOUD_CREDENTIALS[provider].safeParse(credentials);
    if (checked.success) return;
    for (const issue of checked.error.issues)
      ctx.addIssue({ code: 'custom', path: ['credentials', ...issue.path], message: issue.message });
  });

const ProviderRef = z.object({ provider: CloudProvider }).strict();

/**
 * What an agent needs to run deployments in the organisation's own cloud: which providers it may deploy to, and the
 * credentials that make a cloud available (owners and admins; write-only, tried by the cloud before they are saved).
 */
export function cloudProviderTools(
  deps: Pick<CloudProvidersContext, 'cloudProviders' | 'cloudCredentials' | 'config'>,
): ToolDef[] {
  const { cloudProviders } = deps;
  return [
    defineTool({
      name: 'list_providers',
      title: 'List providers',
      description:
        'Where deployments can run: engine_local (this server) and the clouds, each with whether the organisation may ' +
        'deploy to it now (reason says why not) and the regions a deploy may name, the first being the default.',
      permission: 'deployment.read',
      input: z.object({}).strict(),
      output: Providers,
      annotations: READ,
      run: async ({ principal }) => {
        const cloud = await deps.cloudCredentials.regions(principal.org._id);
        return { providers: providerAvailability(principal.org.plan, deps.config.ENGINE_REGION, cloud) };
      },
    }),
    defineTool({
      name: 'list_cloud_credentials',
      title: 'List cloud credentials',
      description:
        'The clouds the organisation has credentials for: who they sign in as, their regions and registry, when they ' +
        'were last checked. Never a secret.',
      permission: 'organization.read',
      input: z.object({}).strict(),
      output: z.object({ credentials: z.array(CloudCredentialsSummary) }),
      annotations: READ,
      run: async ({ principal }) => ({ credentials: await cloudProviders.list(principal) }),
    }),
    defineTool({
      name: 'set_cloud_credentials',
      title: 'Set cloud credentials',
      description:
        'Sets or replaces the organisation’s credentials for a cloud (owners and admins). They are first tried with a ' +
        'read-only call in each region; refused ones are not saved: INVALID_REQUEST in the cloud’s words with what to ' +
        'change (details.reason), and a cloud that did not answer is a retryable INTERNAL_ERROR. Once saved the cloud ' +
        'is available to deploy with provider and region; the secrets are never shown again.',
      permission: 'organization.manage',
      input: SetCredentialsInput,
      output: z.object({ credentials: CloudCredentialsSummary, next: Next }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      audit: { resource: 'provider', id: (i) => i.provider },
      run: async ({ principal, input }) => {
        const credentials = await cloudProviders.put(principal, input.provider, input.credentials);
        return {
          credentials,
          next: {
            tool: 'deploy',
            arguments: { provider: input.provider, region: credentials.regions[0] },
            why: `${input.provider} is available now; deploy an image to it (add the image, name and port).`,
          },
        };
      },
    }),
    defineTool({
      name: 'remove_cloud_credentials',
      title: 'Remove cloud credentials',
      description:
        'Removes the organisation’s credentials for a cloud (owners and admins): it is no longer available to new ' +
        'deploys. Refused (CONFLICT) while deployments run there: destroy them first, or replace the credentials ' +
        'with set_cloud_credentials instead.',
      permission: 'organization.manage',
      input: ProviderRef,
      output: z.object({ provider: CloudProvider, removed: z.literal(true) }),
      annotations: DESTRUCTIVE,
      audit: { resource: 'provider', id: (i) => i.provider },
      run: async ({ principal, input }) => {
        await cloudProviders.remove(principal, input.provider);
        return { provider: input.provider, removed: true as const };
      },
    }),
  ];
}
