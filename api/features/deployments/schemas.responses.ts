import { z } from 'zod';

import { DeploymentStatus, Provider } from '@shared/deployments/types';

/** What the deployment routes answer: the records, their releases and logs, as both origins and MCP show them. */

export const DeployAccepted = z
  .object({
    deploymentId: z.uuid(),
    status: z.literal('queued'),
    provider: Provider,
    statusUrl: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'DeployAccepted' });

const Source = z.discriminatedUnion('type', [
  z.object({ type: z.literal('image'), image: z.string() }),
  z.object({ type: z.literal('upload'), uploadId: z.string(), dockerfilePath: z.string().optional() }),
  z.object({
    type: z.literal('git'),
    repoUrl: z.string(),
    branch: z.string().optional(),
    dockerfilePath: z.string().optional(),
  }),
]);

const ReleaseSource = z
  .discriminatedUnion('type', [
    z.object({
      type: z.literal('image'),
      image: z.string().meta({ description: 'The reference as deployed' }),
      imageId: z.string().meta({ description: 'The image it resolved to (sha256:…)' }),
    }),
    z.object({
      type: z.literal('upload'),
      uploadId: z.string(),
      sha256: z.string().meta({ description: 'SHA-256 of the uploaded zip, hex' }),
      size: z.number().int().meta({ description: 'Bytes of the uploaded zip' }),
    }),
    z.object({
      type: z.literal('git'),
      repoUrl: z.string().meta({ description: 'The repository, without credentials' }),
      branch: z
        .string()
        .optional()
        .meta({ description: 'The branch asked for; absent: the default branch, or a commit by its SHA' }),
      commit: z.string().meta({ description: 'The commit actually built (full SHA)' }),
    }),
  ])
  .meta({
    id: 'ReleaseSource',
    description:
      'What the release’s image was made from; a rollback or an environment change carries on its earlier release’s',
  });

export const Release = z
  .object({
    revision: z.number().int(),
    image: z.string(),
    imageId: z.string().meta({ description: 'The image that runs, by ID: a rollback runs exactly this' }),
    configHash: z
      .string()
      .meta({ description: 'Changes with the image, port, any env name or value, or a volume or reference' }),
    envNames: z.array(z.string()),
    trigger: z.enum(['deploy', 'redeploy', 'rollback']),
    rollbackOf: z.number().int().optional(),
    source: ReleaseSource.optional(),
    mounts: z
      .array(z.object({ volumeId: z.string(), mountPath: z.string() }))
      .optional()
      .meta({ description: 'The volumes its containers mount, as the deployment’s were when it was made' }),
    status: z.enum(['starting', 'active', 'superseded', 'failed']),
    createdAt: z.iso.datetime(),
    readyAt: z.iso
      .datetime()
      .optional()
      .meta({ description: 'When it first served: a release that did can be rolled back to' }),
    endedAt: z.iso.datetime().optional(),
  })
  .meta({ id: 'Release' });

export const ReleaseList = z
  .object({ releases: z.array(Release), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'ReleaseList' });

/**
 * Fields of the entity workflow's (docs/architecture.md, "A deployment's lifecycle, as workflows"), shown by both
 * origins' status reads.
 */
const Lifecycle = {
  revision: z.number().int().optional().meta({ description: 'The release that serves (or would, once started)' }),
  replicas: z.number().int().optional().meta({ description: 'Instances the serving release runs; 0 when stopped' }),
  instances: z
    .array(
      z.object({
        name: z.string(),
        revision: z.number().int(),
        replica: z.number().int(),
        url: z.string().meta({ description: "The instance's direct address; `url` is the stable one" }),
      }),
    )
    .optional(),
  lastFailure: z
    .object({
      phase: z.string(),
      command: z.string(),
      revision: z.number().int(),
      message: z.string(),
      exitCode: z.number().int().optional(),
      lastLines: z.array(z.string()).optional(),
      hint: z.string().optional(),
      at: z.iso.datetime(),
    })
    .optional()
    .meta({
      description: 'Why the last command that tried a new release did not get it serving (the old one kept serving)',
    }),
  releases: z
    .object({ total: z.number().int(), recent: z.array(Release) })
    .optional()
    .meta({ description: 'The newest releases (GET …/releases on the platform API lists them all)' }),
};

export const Deployment = z
  .object({
    ...Lifecycle,
    id: z.uuid(),
    name: z.string(),
    status: DeploymentStatus,
    provider: Provider,
    source: Source.meta({
      description: 'What the deployment was created from; the code each release runs is its own `source` (releases)',
    }),
    port: z.number().int(),
    url: z.string().nullable().meta({ description: 'Where the deployment answers, once running' }),
    envVarNames: z.array(z.string()),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    events: z.array(z.object({ status: DeploymentStatus, message: z.string(), at: z.iso.datetime() })),
    error: z
      .object({
        code: z.literal('DEPLOYMENT_FAILED'),
        phase: z.string().meta({ description: 'build, pull, start, ready or destroy' }),
        message: z.string(),
        exitCode: z.number().int().optional().meta({ description: 'The app’s exit code, when it exited' }),
        lastLines: z.array(z.string()).optional().meta({ description: 'The app’s last log lines, when it ran' }),
        hint: z.string().meta({ description: 'What to do about it, in one sentence' }),
      })
      .optional()
      .meta({ description: 'Set when status is failed: what failed and what to do next' }),
  })
  .meta({ id: 'Deployment' });

export const DeploymentList = z
  .object({
    deployments: z.array(Deployment),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .meta({ id: 'DeploymentList' });

export const Logs = z
  .object({
    deploymentId: z.uuid(),
    lines: z.array(
      z.object({ timestamp: z.string(), stream: z.enum(['stdout', 'stderr', 'build', 'system']), message: z.string() }),
    ),
  })
  .meta({ id: 'Logs' });

export const Providers = z
  .object({
    providers: z.array(
      z.object({
        id: Provider,
        name: z.string(),
        available: z.boolean(),
        reason: z.string().optional(),
        regions: z.array(z.string()).meta({
          description:
            'The regions a deploy to it may name (`region`), the first being its default; engine_local has one, this server’s own; a cloud has those its credentials name (PUT /platform/providers/{provider}/credentials), none without credentials',
        }),
      }),
    ),
  })
  .meta({ id: 'Providers' });

export const UploadResult = z
  .object({
    uploadId: z.uuid(),
    filename: z.string(),
    size: z.number().int(),
    sha256: z.string(),
    expiresAt: z.iso.datetime(),
  })
  .meta({ id: 'UploadResult' });
