import { z } from 'zod';

import { PROJECT_ROLES } from '@shared/projects/types';
import { SECRET_ENVIRONMENTS } from '@shared/secrets/store';

import { queryInt } from '../../http/fields';
import { SourceDeployRequest } from '../deployments/schemas';

// NUL and other control characters only ever arrive by mistake or to forge log lines and terminal output.
// eslint-disable-next-line no-control-regex
const NO_CONTROL = /^[^\u0000-\u001F\u007F]*$/;
const text = (max: number) => z.string().max(max).regex(NO_CONTROL, 'no control characters');

const name = text(100)
  .min(1)
  .refine((v) => v.trim() === v && v.length > 0, 'no leading or trailing spaces')
  .meta({ description: 'Unique in the organisation (1 to 100 characters)' });
const description = text(2000);
const framework = text(100).min(1).meta({ description: 'e.g. nextjs, django; informative' });
/** The deploy's own rules for a repository (the same schema): scheme, no credentials in the URL. */
const repoUrl = SourceDeployRequest.shape.repoUrl.unwrap();
const gitBranch = SourceDeployRequest.shape.branch.unwrap();
const gitTokenSecretId = z.uuid('a secret ID (UUID) from POST /platform/secrets').meta({
  description:
    "Vault secret holding a private-repository token: needs the secret.use permission, an https:// repoUrl on a host in the secret's allowedHosts, and the secret in vaultEnvironment",
});
const vaultEnvironment = z
  .enum(SECRET_ENVIRONMENTS)
  .meta({ description: "The vault environment the project's secrets come from; PRODUCTION when absent" });

export const CreateProjectRequest = z
  .object({
    name,
    description: description.optional(),
    framework: framework.optional(),
    repoUrl: repoUrl.optional(),
    gitBranch: gitBranch.optional(),
    gitTokenSecretId: gitTokenSecretId.optional(),
    vaultEnvironment: vaultEnvironment.optional(),
  })
  .strict()
  // The token is sent to the repository: no repoUrl, nowhere to send it (the service refuses that).
  .meta({ id: 'CreateProjectRequest', dependentRequired: { gitTokenSecretId: ['repoUrl'] } });

/** A partial update: absent fields stay; null removes an optional field. Unknown fields are refused. */
export const UpdateProjectRequest = z
  .object({
    name: name.optional(),
    description: description.nullable().optional(),
    framework: framework.nullable().optional(),
    repoUrl: repoUrl.nullable().optional(),
    gitBranch: gitBranch.nullable().optional(),
    gitTokenSecretId: gitTokenSecretId.nullable().optional(),
    vaultEnvironment: vaultEnvironment.nullable().optional(),
  })
  .strict()
  .meta({ id: 'UpdateProjectRequest', description: 'Absent fields stay as they are; null removes an optional field.' });

export const ProjectIdParams = z.object({ id: z.uuid('a project ID in UUID format') });

export const ProjectListQuery = z
  .object({
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, Number.MAX_SAFE_INTEGER).default(0),
  })
  .strict();

export const DeleteProjectQuery = z
  .object({
    force: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true')
      .meta({
        description:
          'true: destroy the live deployments of the project first (each through its workflow; needs deployment.manage in the project)',
      }),
  })
  .strict();

export const ProjectRole = z.enum(PROJECT_ROLES);

export const AddMemberRequest = z
  .object({
    userId: z.uuid('a user ID (UUID) of this organisation; see GET /platform/users'),
    role: ProjectRole,
  })
  .strict()
  .meta({ id: 'AddMemberRequest' });

export const UpdateMemberRequest = z.object({ role: ProjectRole }).strict().meta({ id: 'UpdateMemberRequest' });

export const MemberParams = z.object({
  id: z.uuid('a project ID in UUID format'),
  userId: z.uuid('a user ID in UUID format'),
});

// Responses

export const Project = z
  .object({
    id: z.uuid(),
    name: z.string(),
    description: z.string().optional(),
    framework: z.string().optional(),
    repoUrl: z.string().optional(),
    gitBranch: z.string().optional(),
    gitTokenSecretId: z.string().optional(),
    vaultEnvironment: z.enum(SECRET_ENVIRONMENTS).optional(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    createdBy: z.string().meta({ description: 'The user who created it (its first admin)' }),
    deploymentCount: z.number().int().optional().meta({
      description:
        'Live deployments of the project (single reads); list them with GET /platform/deployments?projectId={id}',
    }),
  })
  .meta({ id: 'Project' });

export const ProjectList = z
  .object({ projects: z.array(Project), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'ProjectList' });

export const Member = z
  .object({
    userId: z.uuid(),
    email: z.string().optional(),
    name: z.string().optional(),
    role: ProjectRole,
    addedAt: z.iso.datetime(),
    addedBy: z.string(),
  })
  .meta({ id: 'ProjectMember' });
