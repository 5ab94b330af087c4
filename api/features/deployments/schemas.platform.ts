import { z } from 'zod';

import { PLAN_POLICIES } from '@shared/plans';

import { queryInt } from '../../http/fields';
import { DeployRequest, ListQuery, SourceDeployRequest } from './schemas';
import { Deployment } from './schemas.responses';
import { DeploymentVolume, DeploymentVolumes } from './schemas.volumes';

/**
 * The platform API's deployment bodies (routes.platform.ts): the compatibility API's schemas extended, never
 * copied, so a rule on a field (image grammar, env limits, Git URL) holds on both origins. A deployment's commands
 * are in schemas.commands.ts, what a caller observes of it (logs, health, metrics) in schemas.observe.ts.
 */

/** The highest plan's; a request past its own plan's maximum is refused by the command's validator. */
export const MAX_REPLICAS = Math.max(...Object.values(PLAN_POLICIES).map((p) => p.maxReplicas));

const SOURCE_ONLY = ['branch', 'gitTokenSecretId', 'vaultEnvironment', 'dockerfilePath'] as const;

export const PlatformDeployRequest = z
  .object({
    ...SourceDeployRequest.shape,
    image: DeployRequest.shape.image.optional(),
    replicas: z
      .number()
      .int()
      .min(1)
      .max(MAX_REPLICAS)
      .default(1)
      .meta({ description: "Instances of the first release, 1 to the plan's maximum (free 2, pro 5, enterprise 20)" }),
    volumes: DeploymentVolumes.optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const sources = (['image', 'uploadId', 'repoUrl'] as const).filter((k) => b[k] !== undefined);
    if (sources.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: ['image'],
        message: `give exactly one source: image, uploadId or repoUrl (got ${sources.length ? sources.join(' and ') : 'none'})`,
      });
    if (b.volumes?.length && b.replicas > 1)
      ctx.addIssue({
        code: 'custom',
        path: ['replicas'],
        message: 'a deployment with a volume runs one instance (one writer): give replicas 1, or no volumes',
      });
    if (b.image !== undefined)
      for (const k of SOURCE_ONLY)
        if (b[k] !== undefined)
          ctx.addIssue({ code: 'custom', path: [k], message: `${k} applies to uploadId or repoUrl, not to an image` });
  })
  .meta({
    id: 'PlatformDeployRequest',
    description:
      'Exactly one source: `image` (as POST /compat/deploy), or `uploadId` or `repoUrl` (as POST /compat/deploy/source); plus `replicas`, `projectId` and `volumes`.',
    // Each source with none of the others (an image with no source-only field): what the refinement checks.
    oneOf: [
      { required: ['image'], not: { anyOf: ['uploadId', 'repoUrl', ...SOURCE_ONLY].map((k) => ({ required: [k] })) } },
      { required: ['uploadId'], not: { anyOf: [{ required: ['image'] }, { required: ['repoUrl'] }] } },
      { required: ['repoUrl'], not: { anyOf: [{ required: ['image'] }, { required: ['uploadId'] }] } },
    ],
  });
export type PlatformDeployRequest = z.infer<typeof PlatformDeployRequest>;

export const DestroyQuery = z
  .object({
    keepDatabases: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true')
      .meta({
        description:
          "true: the deployment's databases are kept, as managed databases of its project (data and backups with them); false (the default): they are destroyed with it",
      }),
  })
  .strict();

export const PlatformListQuery = ListQuery.extend({
  projectId: z.string().min(1).max(200).optional().meta({ description: "Only this project's deployments" }),
});

export const ReleasesQuery = z
  .object({
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();

// Responses

export const PlatformDeployment = Deployment.extend({
  region: z.string().meta({
    description:
      'Where it runs, one of its provider’s regions, fixed when it was created (GET /compat/providers lists them)',
  }),
  origin: z.enum(['compat', 'platform']).meta({ description: 'The API it was created through' }),
  projectId: z.string().nullable(),
  volumes: z
    .array(DeploymentVolume)
    .optional()
    .meta({ description: 'Volumes it mounts (single reads): the deployment’s, kept by a rollback' }),
}).meta({ id: 'PlatformDeployment' });

export const PlatformDeploymentList = z
  .object({
    deployments: z.array(PlatformDeployment),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .meta({ id: 'PlatformDeploymentList' });

export const Accepted = z
  .object({
    deployment: PlatformDeployment,
    statusUrl: z.string().meta({ description: 'Poll it (GET) to follow the deployment' }),
  })
  .meta({ id: 'DeploymentAccepted' });
