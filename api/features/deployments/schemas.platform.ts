import { z } from 'zod';

import { PLAN_POLICIES } from '@shared/plans';

import { queryInt } from '../../http/fields';
import {
  Deployment,
  DeployRequest,
  ENV_KEY_PATTERN,
  ENV_LIMITS,
  ListQuery,
  LogsQuery,
  SourceDeployRequest,
} from './schemas';

/**
 * The platform API's deployment bodies (routes.platform.ts): the compatibility API's schemas extended, never
 * copied, so a rule on a field (image grammar, env limits, Git URL) holds on both origins.
 */

/** The highest plan's; a request past its own plan's maximum is refused by the command's validator. */
const MAX_REPLICAS = Math.max(...Object.values(PLAN_POLICIES).map((p) => p.maxReplicas));

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
    if (b.image !== undefined)
      for (const k of SOURCE_ONLY)
        if (b[k] !== undefined)
          ctx.addIssue({ code: 'custom', path: [k], message: `${k} applies to uploadId or repoUrl, not to an image` });
  })
  .meta({
    id: 'PlatformDeployRequest',
    description:
      'Exactly one source: `image` (as POST /compat/deploy), or `uploadId` or `repoUrl` (as POST /compat/deploy/source); plus `replicas` and `projectId`.',
    // Each source with none of the others (an image with no source-only field): what the refinement checks.
    oneOf: [
      { required: ['image'], not: { anyOf: ['uploadId', 'repoUrl', ...SOURCE_ONLY].map((k) => ({ required: [k] })) } },
      { required: ['uploadId'], not: { anyOf: [{ required: ['image'] }, { required: ['repoUrl'] }] } },
      { required: ['repoUrl'], not: { anyOf: [{ required: ['image'] }, { required: ['uploadId'] }] } },
    ],
  });
export type PlatformDeployRequest = z.infer<typeof PlatformDeployRequest>;

export const PlatformListQuery = ListQuery.extend({
  projectId: z.string().min(1).max(200).optional().meta({ description: "Only this project's deployments" }),
});

const INSTANCE_NAME = /^slipway-[0-9a-f-]{36}-r\d{1,9}(-\d{1,4})?$/;

/** Unix seconds, or an ISO 8601 time with its zone as zod checks one (real dates only), stated whole as a pattern. */
const SINCE = new RegExp(`^(?:\\d{1,11}|${z.regexes.datetime({ offset: true }).source.slice(1, -1)})$`);

export const PlatformLogsQuery = LogsQuery.extend({
  since: z
    .string()
    .max(40)
    .regex(SINCE, 'an ISO 8601 time with its zone (2026-11-23T14:00:00Z) or Unix seconds')
    .optional()
    .meta({ description: 'Only lines at or after this time: ISO 8601, or Unix seconds' }),
  stream: z.enum(['build', 'system', 'app']).optional().meta({
    description: "build: the build's output; system: Slipway's notices; app: the instances' stdout and stderr",
  }),
  instance: z
    .string()
    .regex(INSTANCE_NAME, 'an instance name as GET /deployments/{id}/health lists it')
    .optional()
    .meta({ description: "Only this instance's output (see instances[].name); build and system lines are left out" }),
});

/** `since`, once SINCE has admitted it, as a time. */
export const sinceDate = (v: string): Date => new Date(/^\d{1,11}$/.test(v) ? Number(v) * 1000 : Date.parse(v));

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
      .optional()
      .meta({ description: 'Names of variables to remove; each must be set on the deployment now' }),
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
    anyOf: [{ required: ['set'] }, { required: ['unset'] }],
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

export const ReleasesQuery = z
  .object({
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();

/** Most buckets one history answer holds; a finer step needs a shorter window. */
export const HISTORY_MAX_POINTS = 1440;

export const HistoryQuery = z
  .object({
    from: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'Start of the window; an hour before `to` when absent' }),
    to: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: 'End of the window (exclusive); now when absent' }),
    step: queryInt(1, 86_400)
      .default(60)
      .meta({
        description: `Seconds per point: the samples in each step are averaged (at most ${HISTORY_MAX_POINTS} points)`,
      }),
  })
  .strict();

// Responses

export const PlatformDeployment = Deployment.extend({
  origin: z.enum(['compat', 'platform']).meta({ description: 'The API it was created through' }),
  projectId: z.string().nullable(),
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

const CommandName = z.enum(['stop', 'start', 'redeploy', 'scale', 'rollback']);

export const CommandAccepted = Accepted.extend({
  command: z.object({
    id: z.string().meta({ description: "The command's ID on the deployment's workflow" }),
    name: CommandName,
    url: z.string().meta({ description: 'GET it to see whether the command is running, succeeded or failed' }),
  }),
}).meta({ id: 'CommandAccepted' });

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

const Probe = z.object({
  ok: z.boolean(),
  status: z.number().int().optional(),
  latencyMs: z.number().optional(),
  error: z.string().optional(),
  at: z.iso.datetime(),
});

const InstanceState = z.enum(['created', 'running', 'restarting', 'paused', 'exited', 'dead', 'removing']);

export const Health = z
  .object({
    deploymentId: z.uuid(),
    status: Deployment.shape.status,
    overall: z.enum(['healthy', 'degraded', 'unhealthy', 'stopped']).meta({
      description:
        'healthy: every instance runs and answers; degraded: some do; unhealthy: none does while some should; stopped: none is meant to run',
    }),
    instances: z.array(
      z.object({
        name: z.string(),
        revision: z.number().int(),
        replica: z.number().int(),
        state: InstanceState,
        restarts: z.number().int(),
        startedAt: z.iso.datetime().optional(),
        exitCode: z.number().int().optional(),
        oomKilled: z.boolean(),
        probe: Probe.meta({ description: 'An HTTP GET / to the port just now; any answer below 500 is ok' }),
      }),
    ),
    at: z.iso.datetime(),
  })
  .meta({ id: 'DeploymentHealth' });

const Numbers = {
  cpuPercent: z.number().meta({ description: 'Percent of one CPU (200 = two CPUs), as docker stats shows it' }),
  memoryBytes: z.number().meta({ description: 'Memory used, without the page cache' }),
  memoryLimitBytes: z.number(),
  networkRxBytes: z.number(),
  networkTxBytes: z.number(),
  blockReadBytes: z.number(),
  blockWriteBytes: z.number(),
  pids: z.number(),
};

export const ContainerMetrics = z
  .object({
    deploymentId: z.uuid(),
    instances: z.array(
      z.object({
        name: z.string(),
        revision: z.number().int(),
        replica: z.number().int(),
        ...Numbers,
        onlineCpus: z.number().int(),
        memoryPercent: z.number(),
        at: z.iso.datetime(),
      }),
    ),
  })
  .meta({ id: 'ContainerMetrics' });

export const MetricsHistory = z
  .object({
    deploymentId: z.uuid(),
    from: z.iso.datetime(),
    to: z.iso.datetime(),
    step: z.number().int(),
    sampleEveryS: z.number().int().meta({ description: 'How often the worker records a sample' }),
    series: z.array(
      z.object({
        instance: z.string(),
        revision: z.number().int(),
        replica: z.number().int(),
        points: z.array(z.object({ at: z.iso.datetime(), samples: z.number().int(), ...Numbers })),
      }),
    ),
  })
  .meta({ id: 'ContainerMetricsHistory' });

export const PlatformLogs = z
  .object({
    deploymentId: z.uuid(),
    lines: z.array(
      z.object({
        timestamp: z.string(),
        stream: z.enum(['stdout', 'stderr', 'build', 'system']),
        message: z.string(),
        instance: z.string().optional().meta({ description: 'The instance an app line came from' }),
      }),
    ),
  })
  .meta({ id: 'PlatformLogs' });
