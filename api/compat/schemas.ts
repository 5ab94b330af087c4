import { z } from 'zod';

import { DeploymentStatus, Provider } from '../../shared/deployments';

const name = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'a DNS label: lowercase letters, digits and "-", at most 63 characters');
const port = z.number().int().min(1).max(65535).default(8080).meta({ description: 'Port the container listens on' });
const envVars = z
  .record(
    z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name ([A-Za-z_][A-Za-z0-9_]*)'),
    z.string(),
  )
  .default({})
  .meta({ description: 'Environment variables; values are never returned' });
const requestId = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .meta({ description: 'Idempotency key: reusing it answers 409 DUPLICATE_REQUEST and starts nothing' });
const provider = Provider.default('engine_local');
const projectId = z.string().min(1).optional();
/** Fields every deploy takes, whatever its source. */
const deployCommon = { name, port, envVars, requestId, provider, projectId };

export const DeployRequest = z
  .object({
    image: z
      .string()
      .min(1)
      .max(512)
      .regex(/^\S+$/, 'an image reference without spaces')
      .meta({ description: 'Container image reference' }),
    name,
    port,
    envVars,
    requestId,
    provider,
    projectId,
  })
  .strict()
  .meta({ id: 'DeployRequest' });

export const SourceDeployRequest = z
  .object({
    uploadId: z.uuid().optional().meta({ description: 'From POST /uploads/zip' }),
    repoUrl: z
      .url({ protocol: /^(https?|git)$/, error: 'an https://, http:// or git:// repository URL' })
      .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), {
        message:
          'the URL must not carry credentials: store the token with POST /platform/secrets and pass gitTokenSecretId',
      })
      .optional()
      .meta({ description: 'https:// (or http://, git://) repository; private ones take gitTokenSecretId' }),
    branch: z
      .string()
      .min(1)
      .max(255)
      .regex(/^(?!-)[^\s~^:?*[\\]+$/, 'a Git branch name')
      .optional()
      .meta({ description: "Branch to build; the repository's default branch when absent" }),
    gitTokenSecretId: z
      .string()
      .min(1)
      .optional()
      .meta({ description: 'Vault secret holding a private-repository token' }),
    dockerfilePath: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .meta({ description: 'Dockerfile to build, relative to the source root; detected when absent' }),
    ...deployCommon,
  })
  .strict()
  .refine((b) => (b.uploadId === undefined) !== (b.repoUrl === undefined), {
    message: 'give exactly one source: uploadId or repoUrl',
    path: ['uploadId'],
  })
  .meta({ id: 'SourceDeployRequest' });

export const DeploymentIdParams = z.object({ id: z.uuid('a deployment ID in UUID format') });

export const ListQuery = z
  .object({
    status: DeploymentStatus.optional(),
    provider: Provider.optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    offset: z.coerce.number().int().min(0).default(0),
  })
  .strict();

export const LogsQuery = z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }).strict();

// Responses

export const ErrorResponse = z
  .object({ error: z.string(), code: z.string(), details: z.record(z.string(), z.unknown()) })
  .meta({ id: 'ErrorResponse' });

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

export const Deployment = z
  .object({
    id: z.uuid(),
    name: z.string(),
    status: DeploymentStatus,
    provider: Provider,
    source: Source,
    port: z.number().int(),
    url: z.string().nullable().meta({ description: 'Where the deployment answers, once running' }),
    envVarNames: z.array(z.string()),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    events: z.array(z.object({ status: DeploymentStatus, message: z.string(), at: z.iso.datetime() })),
    error: z
      .object({ code: z.literal('DEPLOYMENT_FAILED'), phase: z.string(), message: z.string() })
      .optional()
      .meta({ description: 'Set when status is failed; read the logs for the cause' }),
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
      z.object({ id: Provider, name: z.string(), available: z.boolean(), reason: z.string().optional() }),
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
