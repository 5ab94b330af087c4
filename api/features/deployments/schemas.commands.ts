import { z } from 'zod';

import { DeployRequest, ENV_KEY_PATTERN, ENV_LIMITS, SourceDeployRequest } from './schemas';
import { Accepted, MAX_REPLICAS } from './schemas.platform';
import { Deployment } from './schemas.responses';
import { DeploymentVolume } from './schemas.volumes';

/**
 * The bodies of a deployment's commands (routes.commands.ts) and their answers: a redeploy with new code or a new
 * environment, an environment patch, scale and rollback, and the progress of each.
 */

/** A full commit SHA (SHA-1, or SHA-256 in a repository that uses it): what a shallow fetch of one commit names. */
const COMMIT_SHA = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * New code from Git: every field may be left out, so `{}` rebuilds the deployment's own repository and branch (or its
 * project's) at their head. The fields are a first deploy's, with its rules.
 */
export const RedeployGitSource = z
  .object({
    repoUrl: SourceDeployRequest.shape.repoUrl.meta({
      description:
        "The repository; when absent, the deployment's own (if it was deployed from Git), else its project's repoUrl",
    }),
    branch: SourceDeployRequest.shape.branch.meta({
      description:
        "Branch to build; when absent, the branch of the repository defaulted to above, else the repository's default branch",
    }),
    commit: z
      .string()
      .regex(COMMIT_SHA, 'a full commit SHA: 40 lowercase hex characters (64 in a SHA-256 repository)')
      .optional()
      .meta({ description: 'Build exactly this commit (its full SHA) instead of the branch head' }),
    gitTokenSecretId: SourceDeployRequest.shape.gitTokenSecretId.meta({
      description:
        "Vault secret holding a private-repository token, as for a first deploy (secret.use permission, the repository's host in its allowedHosts); when repoUrl is absent, the deployment's (or project's) own",
    }),
    vaultEnvironment: SourceDeployRequest.shape.vaultEnvironment,
  })
  .strict()
  .meta({
    id: 'RedeployGitSource',
    description:
      'New code from Git. `{}` rebuilds the head of the deployment\'s own repository and branch (or its project\'s); `{"commit": "<sha>"}` builds that commit of it; `repoUrl` and `branch` name another.',
  });

/** A redeploy's new code, at most one: each is checked as a first deploy's source is (DeploymentService). */
const REDEPLOY_SOURCES = ['image', 'uploadId', 'git'] as const;
/** Fields that shape a build, so they go only with a source that is built. */
const BUILD_ONLY = ['dockerfilePath'] as const;

/**
 * A redeploy: a new environment (`envVars`, which replaces the old one entirely, names and values), new code (one
 * source, built or pulled as a first deploy's is), or both. With new code and no `envVars` the serving environment is
 * kept; a body with neither is refused.
 */
export const RedeployRequest = z
  .object({
    envVars: DeployRequest.shape.envVars
      .unwrap()
      .meta({
        ...DeployRequest.shape.envVars.meta(),
        description: `The new environment; it replaces the old one (variables absent here are removed). Absent with a new source: the serving environment is kept. ${String(DeployRequest.shape.envVars.meta()?.description ?? '')}`,
      })
      .optional(),
    image: DeployRequest.shape.image.optional(),
    uploadId: SourceDeployRequest.shape.uploadId.meta({
      description: 'New code as a zip from POST /compat/uploads/zip (an upload of this organisation, not expired)',
    }),
    git: RedeployGitSource.optional(),
    dockerfilePath: SourceDeployRequest.shape.dockerfilePath.meta({
      description:
        "Dockerfile to build, relative to the source root (uploadId or git); the deployment's own when absent, else detected",
    }),
  })
  .strict()
  .superRefine((b, ctx) => {
    const sources = REDEPLOY_SOURCES.filter((k) => b[k] !== undefined);
    if (sources.length > 1)
      ctx.addIssue({
        code: 'custom',
        path: [sources[1]!],
        message: `give at most one new source: ${REDEPLOY_SOURCES.join(', ')} (got ${sources.join(' and ')})`,
      });
    if (sources.length === 0 && b.envVars === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['envVars'],
        message: `give envVars (the new environment), a new source (${REDEPLOY_SOURCES.join(', ')}), or both`,
      });
    for (const k of BUILD_ONLY)
      if (b[k] !== undefined && (b.image !== undefined || sources.length === 0))
        ctx.addIssue({
          code: 'custom',
          path: [k],
          message: `${k} applies to a source that is built (uploadId or git)`,
        });
  })
  .meta({
    id: 'RedeployRequest',
    description:
      'A new environment (`envVars`, replacing the old one), new code (one of `image`, `uploadId` or `git`, checked as a first deploy checks it), or both. New code with no `envVars` keeps the serving environment. `{"git": {}}` rebuilds the deployment\'s own repository and branch at their head.',
    // The first form is the environment change alone; then each source with none of the others.
    oneOf: [
      {
        required: ['envVars'],
        not: { anyOf: [...REDEPLOY_SOURCES, ...BUILD_ONLY].map((k) => ({ required: [k] })) },
      },
      ...REDEPLOY_SOURCES.map((source) => ({
        required: [source],
        not: {
          anyOf: [...REDEPLOY_SOURCES.filter((k) => k !== source), ...(source === 'image' ? BUILD_ONLY : [])].map(
            (k) => ({ required: [k] }),
          ),
        },
      })),
    ],
  });
export type RedeployRequest = z.infer<typeof RedeployRequest>;

const envName = z
  .string()
  .max(ENV_LIMITS.maxKeyLength)
  .regex(new RegExp(ENV_KEY_PATTERN), `an environment variable name (${ENV_KEY_PATTERN})`);

export const EnvPatchRequest = z
  .object({
    set: DeployRequest.shape.envVars
      .unwrap()
      .meta({
        ...DeployRequest.shape.envVars.meta(),
        description:
          'Variables to add or change, with their values; the others keep theirs. The same rules as envVars hold, ' +
          `for these and for the whole environment they make. ${String(DeployRequest.shape.envVars.meta()?.description ?? '')}`,
      })
      .optional(),
    unset: z
      .array(envName)
      .max(ENV_LIMITS.maxVars)
      .meta({
        description: 'Names of variables to remove, each once; each must be set on the deployment now',
        uniqueItems: true,
      })
      .optional(),
  })
  .strict()
  .superRefine((b, ctx) => {
    const set = Object.keys(b.set ?? {});
    const unset = b.unset ?? [];
    if (set.length === 0 && unset.length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['set'],
        message: 'give at least one variable to set (set: {"NAME": "value"}) or to remove (unset: ["NAME"])',
      });
    const both = unset.filter((n) => set.includes(n));
    if (both.length)
      ctx.addIssue({
        code: 'custom',
        path: ['unset'],
        message: `${both.join(', ')} cannot be both set and removed in one change: leave it out of one of them`,
      });
    const twice = unset.filter((n, i) => unset.indexOf(n) !== i);
    if (twice.length)
      ctx.addIssue({ code: 'custom', path: ['unset'], message: `${twice.join(', ')} is given more than once` });
  })
  .meta({
    id: 'EnvPatchRequest',
    description:
      'A change to some variables of the environment: `set` adds or changes these, `unset` removes these, and every ' +
      'other variable keeps its value. At least one of them is non-empty.',
    // What the refinement above holds, as JSON Schema says it: a non-empty `set`, or a non-empty `unset`.
    anyOf: [
      { required: ['set'], properties: { set: { minProperties: 1 } } },
      { required: ['unset'], properties: { unset: { minItems: 1 } } },
    ],
  });
export type EnvPatchRequest = z.infer<typeof EnvPatchRequest>;

export const ScaleRequest = z
  .object({
    replicas: z
      .number()
      .int()
      .min(0)
      .max(MAX_REPLICAS)
      .meta({ description: "Instances to run, 0 (the same as stop) to the plan's maximum" }),
  })
  .strict()
  .meta({ id: 'ScaleRequest' });

export const RollbackRequest = z
  .object({
    revision: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional().meta({
      description: 'The release to go back to (GET /deployments/{id}/releases); the last healthy one when absent',
    }),
  })
  .strict()
  .meta({ id: 'RollbackRequest' });

// Responses

const CommandName = z.enum(['stop', 'start', 'redeploy', 'scale', 'rollback']);

export const CommandAccepted = Accepted.extend({
  command: z.object({
    id: z.string().meta({ description: "The command's ID on the deployment's workflow" }),
    name: CommandName,
    url: z.string().meta({ description: 'GET it to see whether the command is running, succeeded or failed' }),
  }),
}).meta({ id: 'CommandAccepted' });

export const VolumeChangeAccepted = CommandAccepted.extend({
  volumeId: z.string().meta({ description: 'The volume attached or detached' }),
  volumes: z.array(DeploymentVolume).meta({ description: "The deployment's volumes after the change" }),
}).meta({ id: 'VolumeChangeAccepted' });

export const EnvPatchAccepted = CommandAccepted.extend({
  env: z
    .object({
      envVarNames: z.array(z.string()).meta({ description: 'The names of the environment the new release runs with' }),
      set: z.array(z.string()).meta({ description: 'Names whose value was added or changed' }),
      unset: z.array(z.string()).meta({ description: 'Names removed' }),
    })
    .meta({ description: 'Names only: environment values are never returned' }),
}).meta({ id: 'EnvPatchAccepted' });

export const CommandIdParams = z.object({
  id: z.uuid('a deployment ID in UUID format'),
  commandId: z
    .string()
    .regex(/^(stop|start|redeploy|scale|rollback):[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'a command ID as a 202 gave it'),
});

export const CommandProgress = z
  .object({
    id: z.string(),
    state: z.enum(['running', 'succeeded', 'failed']),
    outcome: z
      .object({
        command: z.string(),
        status: Deployment.shape.status,
        revision: z.number().int(),
        replicas: z.number().int(),
      })
      .optional()
      .meta({ description: 'What a succeeded command left: the status and the serving release' }),
    message: z.string().optional().meta({ description: 'Why a failed command failed' }),
  })
  .meta({ id: 'CommandProgress' });
