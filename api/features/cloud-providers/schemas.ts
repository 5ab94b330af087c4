import { z } from 'zod';

import { CloudProvider, ContainerAppsCredentials, EcsCredentials, RunCredentials } from '@shared/cloud/credentials';

export const ProviderParams = z.object({
  provider: CloudProvider.meta({
    description: 'The cloud: cloud_a_run, cloud_b_container_apps or cloud_c_ecs_fargate',
  }),
});

/** The body of a PUT: the cloud's own shape, checked again against the path's cloud. */
export const PutCredentialsRequest = z.union([RunCredentials, ContainerAppsCredentials, EcsCredentials]).meta({
  id: 'CloudCredentialsRequest',
  description:
    'The credentials of the cloud the path names: cloud_a_run takes a service account key, cloud_b_container_apps a service principal and its Container Apps environment, cloud_c_ecs_fargate an access key (or a role to assume), the cluster, its network and the load balancer listener. Tried with a read-only call before they are saved; never shown again.',
});

export const CloudCredentialsSummary = z
  .object({
    provider: CloudProvider,
    identity: z
      .string()
      .meta({ description: 'Who they sign in as: service account e-mail, client ID, access key ID or role' }),
    regions: z.array(z.string()),
    registry: z.string().nullable().meta({ description: 'Where source deploys push their image, when set' }),
    verifiedAt: z.string(),
    updatedAt: z.string(),
    updatedBy: z.string(),
  })
  .meta({ id: 'CloudCredentialsSummary' });
