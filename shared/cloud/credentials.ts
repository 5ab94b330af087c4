import { z } from 'zod';

import { Region } from '../deployments/regions';
import type { Provider } from '../deployments/types';

/**
 * The cloud providers (docs/architecture.md, "Cloud providers"): each runs an organisation's deployments in the
 * organisation's own cloud account, with credentials it sets through `PUT /platform/providers/{provider}/credentials`.
 * These schemas are the request bodies of that route and what the vault holds, sealed. Nothing in them names an
 * endpoint: where an SDK talks is the server's setting (shared/config.ts, "CLOUD_"), never a tenant's, so a tenant
 * cannot point our worker at an address of its choosing.
 */
export const CLOUD_PROVIDERS = ['cloud_a_run', 'cloud_b_container_apps', 'cloud_c_ecs_fargate'] as const;
export type CloudProvider = (typeof CLOUD_PROVIDERS)[number];
export const CloudProvider = z.enum(CLOUD_PROVIDERS);
export const isCloudProvider = (p: Provider | string): p is CloudProvider =>
  (CLOUD_PROVIDERS as readonly string[]).includes(p);

const id = (what: string, max = 200) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[\w.:/@+=,-]+$/, `${what}: letters, digits and . : / @ + = , - _ only`);

/**
 * Where a source deploy's image is pushed for the cloud to pull: a repository path (`host/path`, no tag). Without a
 * username the provider's own registry sign-in is used (Artifact Registry with the service account, ACR with the
 * client secret, ECR's authorisation token); with one, `password` is the registry's token.
 */
export const RegistryTarget = z
  .object({
    repository: z
      .string()
      .max(255)
      .regex(
        /^[a-z0-9.-]+(:\d{1,5})?(\/[a-z0-9._-]+)+$/,
        'a repository as host[:port]/path, lower case, no tag (e.g. europe-west1-docker.pkg.dev/acme/apps)',
      ),
    username: z.string().min(1).max(200).optional(),
    password: z.string().min(1).max(4096).optional(),
  })
  .strict()
  .refine((r) => !r.username === !r.password, { message: 'username and password go together, or neither is given' });
export type RegistryTarget = z.infer<typeof RegistryTarget>;

const regions = z
  .array(Region)
  .min(1)
  .max(20)
  .describe('The regions deploys may name; the first is the default. Checked by the read-only call in each.');

export const RunCredentials = z
  .object({
    serviceAccountKey: z
      .object({
        type: z.literal('service_account'),
        project_id: id('project_id', 30),
        client_email: z.email(),
        private_key: z.string().min(64).max(8192).includes('PRIVATE KEY'),
        private_key_id: z.string().max(100).optional(),
      })
      // The downloaded key JSON has more fields (token_uri, auth_uri, …): accepted, and dropped, since the token
      // endpoint is the server's setting.
      .strip()
      .describe('The service account key JSON as Google Cloud downloads it (roles: Cloud Run Admin, Logs Viewer).'),
    regions,
    registry: RegistryTarget.optional(),
  })
  .strict();
export type RunCredentials = z.infer<typeof RunCredentials>;

export const ContainerAppsCredentials = z
  .object({
    tenantId: id('tenantId', 64),
    clientId: id('clientId', 64),
    clientSecret: z.string().min(1).max(1024),
    subscriptionId: id('subscriptionId', 64),
    resourceGroup: id('resourceGroup', 90),
    /** The Container Apps environment's resource ID (its region is the app's). */
    environmentId: id('environmentId', 400),
    /** The Log Analytics workspace (customer) ID the environment writes to; logs come from there. */
    logAnalyticsWorkspaceId: id('logAnalyticsWorkspaceId', 64).optional(),
    regions,
    registry: RegistryTarget.optional(),
  })
  .strict();
export type ContainerAppsCredentials = z.infer<typeof ContainerAppsCredentials>;

export const EcsCredentials = z
  .object({
    accessKeyId: id('accessKeyId', 128),
    secretAccessKey: z.string().min(1).max(256),
    sessionToken: z.string().min(1).max(4096).optional(),
    /** Assumed (STS AssumeRole) with the keys above before every call, when given. */
    roleArn: id('roleArn', 2048).optional(),
    externalId: id('externalId', 1224).optional(),
    cluster: id('cluster', 255),
    subnets: z.array(id('subnet', 64)).min(1).max(16),
    securityGroups: z.array(id('securityGroup', 64)).min(1).max(5),
    /** The task execution role (pulls the image, writes CloudWatch Logs). */
    executionRoleArn: id('executionRoleArn', 2048),
    assignPublicIp: z.boolean().default(false),
    /**
     * How a deployment gets its URL: an Application Load Balancer listener shared by the org's deployments, a rule per
     * deployment on host `<deployment id>.<hostSuffix>` (a wildcard DNS record points at the balancer), a target group
     * per deployment in `vpcId`.
     */
    loadBalancer: z
      .object({
        listenerArn: id('listenerArn', 2048),
        vpcId: id('vpcId', 64),
        hostSuffix: z
          .string()
          .max(200)
          .regex(/^([a-z0-9-]+\.)+[a-z]{2,}$/, 'a DNS suffix such as apps.example.com'),
        scheme: z.enum(['http', 'https']).default('https'),
      })
      .strict(),
    regions,
    registry: RegistryTarget.optional(),
  })
  .strict();
export type EcsCredentials = z.infer<typeof EcsCredentials>;

export const CLOUD_CREDENTIALS = {
  cloud_a_run: RunCredentials,
  cloud_b_container_apps: ContainerAppsCredentials,
  cloud_c_ecs_fargate: EcsCredentials,
} as const;
export interface CloudCredentialsOf {
  cloud_a_run: RunCredentials;
  cloud_b_container_apps: ContainerAppsCredentials;
  cloud_c_ecs_fargate: EcsCredentials;
}
