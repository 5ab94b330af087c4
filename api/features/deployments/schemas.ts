import { z } from 'zod';

import { Region } from '@shared/deployments/regions';
import { DeploymentStatus, Provider } from '@shared/deployments/types';
import { IMAGE_REFERENCE, imageReferenceProblem } from '@shared/images/reference';
import { SECRET_ENVIRONMENTS } from '@shared/secrets/store';

import { queryInt } from '../../http/fields';

const name = z
  .string()
  .max(63)
  .regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/, 'a DNS label: lowercase letters, digits and "-", at most 63 characters');
const port = z.number().int().min(1).max(65535).default(8080).meta({ description: 'Port the container listens on' });
/** Limits of `envVars`, stated in the OpenAPI document: the engine and the sealed record both hold them. */
export const ENV_LIMITS = { maxVars: 100, maxTotalBytes: 64 * 1024, maxKeyLength: 256 } as const;
export const ENV_KEY_PATTERN = '^[A-Za-z_][A-Za-z0-9_]*$';
// NUL cannot be passed to a process at all; other control characters (escape sequences, form feeds) only ever
// arrive by mistake or to forge log lines. Tab, LF and CR stay allowed: multi-line values (PEM keys) are common.
// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]*$/;
const envVars = z
  .record(
    z
      .string()
      .max(ENV_LIMITS.maxKeyLength)
      .regex(new RegExp(ENV_KEY_PATTERN), 'an environment variable name ([A-Za-z_][A-Za-z0-9_]*)'),
    z.string().regex(NO_CONTROL, 'no NUL or control characters (tab, LF and CR are allowed)'),
  )
  .refine((e) => Object.keys(e).length <= ENV_LIMITS.maxVars, `at most ${ENV_LIMITS.maxVars} variables`)
  .refine(
    (e) =>
      Object.entries(e).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v) + 2, 0) <=
      ENV_LIMITS.maxTotalBytes,
    `at most ${ENV_LIMITS.maxTotalBytes} bytes in all (names and values, UTF-8)`,
  )
  .default({})
  .meta({
    description:
      `Environment variables; values are never returned. Names match ${ENV_KEY_PATTERN} (at most ` +
      `${ENV_LIMITS.maxKeyLength} characters); values carry no NUL or control characters other than tab, LF and CR; ` +
      `at most ${ENV_LIMITS.maxVars} variables and ${ENV_LIMITS.maxTotalBytes} bytes of names and values in all.`,
    maxProperties: ENV_LIMITS.maxVars,
    propertyNames: { type: 'string', pattern: ENV_KEY_PATTERN, maxLength: ENV_LIMITS.maxKeyLength },
  });
const requestId = z
  .string()
  .min(1)
  .max(200)
  .optional()
  .meta({ description: 'Idempotency key: reusing it answers 409 DUPLICATE_REQUEST and starts nothing' });
const provider = Provider.optional().meta({
  description:
    "Where it runs: the organisation's defaultProvider when absent (engine_local unless GET /platform/organization says otherwise); one outside the organisation's allowedProviders is refused with PROVIDER_NOT_ALLOWED",
});
const region = Region.optional().meta({
  description:
    "Where it runs, one of the provider's regions (GET /compat/providers lists them); absent: the organisation's defaultRegion when the provider is its defaultProvider, else the provider's first region. A region the provider does not have is refused with 400 naming the ones it has. engine_local has one region, this server's own",
});
const projectId = z.string().min(1).optional();
/** Fields every deploy takes, whatever its source. */
const deployCommon = { name, port, envVars, requestId, provider, region, projectId };

export const DeployRequest = z
  .object({
    image: z
      .string()
      .min(1)
      .max(512)
      .superRefine((value, ctx) => {
        // The reference grammar, before anything reaches the engine: "../../../etc/passwd" is not an image.
        const why = imageReferenceProblem(value);
        if (why) ctx.addIssue({ code: 'custom', message: why });
      })
      .meta({
        description:
          'Container image reference (distribution grammar): [registry/]repository[:tag][@sha256:digest], ' +
          'e.g. nginx:1.27 or registry.example.com/team/app:2; the name before tag and digest at most 255 ' +
          'characters. Image IDs and ID prefixes are not accepted.',
        // The parser's rules as one pattern, so the document refuses what the refinement refuses.
        pattern: IMAGE_REFERENCE.source,
      }),
    name,
    port,
    envVars,
    requestId,
    provider,
    region,
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
    gitTokenSecretId: z.string().min(1).optional().meta({
      description:
        "Vault secret holding a private-repository token; needs the secret.use permission, an https:// repoUrl on a host in the secret's allowedHosts, and the secret in vaultEnvironment",
    }),
    vaultEnvironment: z.enum(SECRET_ENVIRONMENTS).optional().meta({
      description:
        "Vault environment the secrets of this deploy come from; the organisation's defaultVaultEnvironment when absent (PRODUCTION unless changed)",
    }),
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
  .meta({
    id: 'SourceDeployRequest',
    description: 'Exactly one source: `uploadId` (from POST /uploads/zip) or `repoUrl`, never both.',
    oneOf: [{ required: ['uploadId'] }, { required: ['repoUrl'] }],
  });

export const DeploymentIdParams = z.object({ id: z.uuid('a deployment ID in UUID format') });

export const ListQuery = z
  .object({
    status: DeploymentStatus.optional(),
    provider: Provider.optional(),
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();

/** The long-poll of a status read: one request instead of a polling loop (README, "Waiting, following and failures"). */
export const WAIT_MAX_S = 120;
export const GetQuery = z
  .object({
    wait: DeploymentStatus.optional().meta({
      description:
        'Answer once the deployment is in this status or any settled one (running, stopped, failed), or when `timeout` passes; without it the answer is immediate.',
    }),
    timeout: queryInt(1, WAIT_MAX_S)
      .default(30)
      .meta({
        description: `Seconds to wait at most (1 to ${WAIT_MAX_S}); the answer then shows the status as it is.`,
      }),
  })
  .strict();

export const LogsQuery = z.object({ limit: queryInt(1, 1000).default(100) }).strict();
