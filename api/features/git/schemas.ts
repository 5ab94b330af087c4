import { z } from 'zod';

import { DELIVERY_OUTCOMES, GIT_PROVIDERS } from '@shared/git-bindings/types';
import { SECRET_ENVIRONMENTS } from '@shared/secrets/store';

import { queryInt } from '../../http/fields';
import { SourceDeployRequest } from '../deployments/schemas';

const provider = z.enum(GIT_PROVIDERS, 'github, gitlab, gitea or generic').meta({
  description:
    'The Git host: it decides the default base URL and the webhook scheme a binding through this connection expects',
});

export const CreateConnectionRequest = z
  .object({
    provider,
    baseUrl: z
      .url({ protocol: /^https?$/, error: 'an https:// URL of the Git host (e.g. https://git.example.com)' })
      .refine((u) => !/^[a-z]+:\/\/[^/]*@/i.test(u), {
        message: 'the URL must not carry credentials: the token is the org secret tokenSecretId names',
      })
      .optional()
      .meta({
        description:
          'The host’s https:// URL; https://github.com, https://gitlab.com or https://gitea.com when absent (generic: required). http:// only where the server allows private Git hosts',
      }),
    tokenSecretId: z.string().min(1).max(200).meta({
      description:
        'An org secret (POST /platform/secrets) holding the host’s access token, bound to its host (allowedHosts), in any vault environment (the connection keeps it); needs secret.use. Slipway stores the ID, never the token',
    }),
  })
  .strict()
  .meta({ id: 'CreateGitConnectionRequest' });

export const Connection = z
  .object({
    id: z.uuid(),
    provider: z.enum(GIT_PROVIDERS),
    baseUrl: z.string(),
    tokenSecretId: z.string().meta({ description: 'The org secret holding the token (never the token)' }),
    vaultEnvironment: z.enum(SECRET_ENVIRONMENTS).meta({
      description: 'The secret’s vault environment: every redeploy through this connection reads the token there',
    }),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'GitConnection' });

export const ConnectionList = z
  .object({
    connections: Connection.array(),
    total: z.number().int(),
    limit: z.number().int(),
    offset: z.number().int(),
  })
  .meta({ id: 'GitConnectionList' });

export const ConnectionIdParams = z.object({ id: z.uuid('a Git connection ID in UUID format') });
export const BindingIdParams = z.object({ id: z.uuid('a Git binding ID in UUID format') });

export const PageQuery = z
  .object({ limit: queryInt(1, 100).default(20), offset: queryInt(0, 1_000_000).default(0) })
  .strict();

export const BindingListQuery = PageQuery.extend({
  projectId: z.uuid('a project ID in UUID format').optional(),
}).strict();

export const CreateBindingRequest = z
  .object({
    connectionId: z.uuid('a Git connection ID in UUID format').optional().meta({
      description:
        'The connection whose token reads a private repository and whose provider’s webhook scheme deliveries use; without it the repository must be public and any supported scheme is accepted',
    }),
    repoUrl: SourceDeployRequest.shape.repoUrl.unwrap().meta({
      description:
        'The repository, held to a source deploy’s rules (no credentials, no private address); with a connection, on its host',
    }),
    branch: SourceDeployRequest.shape.branch.unwrap().meta({
      description: 'The branch whose pushes ship a release; pushes to any other ref are listed as ignored',
    }),
    deploymentId: z.uuid('a deployment ID in UUID format').optional().meta({
      description: 'Ship each push as a new release of this deployment (exactly one of deploymentId and projectId)',
    }),
    projectId: z.uuid('a project ID in UUID format').optional().meta({
      description:
        'Ship each push as a new release of every deployment of this project built from repoUrl (exactly one of deploymentId and projectId); a push while there is none is listed as ignored',
    }),
  })
  .strict()
  .refine((b) => (b.deploymentId === undefined) !== (b.projectId === undefined), {
    message: 'give exactly one target: deploymentId or projectId',
    path: ['deploymentId'],
  })
  .meta({
    id: 'CreateGitBindingRequest',
    description: 'Exactly one target: `deploymentId` or `projectId`.',
    oneOf: [{ required: ['deploymentId'] }, { required: ['projectId'] }],
  });

export const Binding = z
  .object({
    id: z.uuid(),
    connectionId: z.string().nullable(),
    provider: z.enum(GIT_PROVIDERS).nullable().meta({
      description: 'The webhook scheme deliveries must use (the connection’s); null: any supported scheme',
    }),
    repoUrl: z.string(),
    branch: z.string(),
    deploymentId: z.string().nullable(),
    projectId: z.string().nullable().meta({ description: 'The project the target is in (null: none)' }),
    target: z.enum(['deployment', 'project']),
    webhookUrl: z.string().meta({ description: 'Where the Git host sends its push events (POST)' }),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'GitBinding' });

export const NewBinding = Binding.extend({
  webhookSecret: z.string().meta({
    description: 'The webhook secret, shown in this answer only: paste it into the Git host’s webhook form',
  }),
}).meta({ id: 'NewGitBinding' });

export const BindingList = z
  .object({ bindings: Binding.array(), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'GitBindingList' });

export const Delivery = z
  .object({
    id: z.uuid(),
    deliveryId: z.string().nullable().meta({ description: 'The sender’s delivery ID (as claimed, for a refused one)' }),
    provider: z.enum(GIT_PROVIDERS).nullable(),
    event: z.string().nullable(),
    ref: z.string().nullable(),
    commit: z.string().nullable(),
    receivedAt: z.iso.datetime(),
    outcome: z.enum([...DELIVERY_OUTCOMES, 'received']).meta({
      description:
        'shipped: releases asked for (see releases); ignored: nothing to do (reason: another branch, a ping, a deletion); refused: unsigned or wrongly signed; failed: the redeploy was refused (reason); received: being handled',
    }),
    reason: z.string().nullable(),
    releases: z
      .object({
        deploymentId: z.string(),
        commandId: z
          .string()
          .meta({ description: 'Follow it with GET /platform/deployments/{id}/commands/{commandId}' }),
      })
      .array(),
  })
  .meta({ id: 'GitDelivery' });

export const DeliveryList = z
  .object({ deliveries: Delivery.array(), total: z.number().int(), limit: z.number().int(), offset: z.number().int() })
  .meta({ id: 'GitDeliveryList' });

/** The hooks origin's path. */
export const HookParams = z.object({ bindingId: z.uuid('a Git binding ID in UUID format') });

/** Every scheme's headers, all optional: which ones a delivery carries says its scheme (documented, read by name). */
export const HookHeaders = z.looseObject({
  'x-hub-signature-256': z
    .string()
    .optional()
    .meta({ description: 'GitHub: sha256=<hex HMAC-SHA256 of the raw body under the webhook secret>' }),
  'x-github-event': z.string().optional().meta({ description: 'GitHub: push (ping answers 200 and ships nothing)' }),
  'x-github-delivery': z.string().optional().meta({ description: 'GitHub: the delivery ID (a replay is a duplicate)' }),
  'x-gitlab-token': z.string().optional().meta({ description: 'GitLab: the webhook secret itself' }),
  'x-gitlab-event': z.string().optional().meta({ description: 'GitLab: Push Hook' }),
  'x-gitlab-event-uuid': z.string().optional().meta({ description: 'GitLab: the delivery ID' }),
  'idempotency-key': z
    .string()
    .optional()
    .meta({ description: 'GitLab: the delivery ID when X-Gitlab-Event-UUID is absent' }),
  'x-gitea-signature': z.string().optional().meta({ description: 'Gitea: <hex HMAC-SHA256 of the raw body>' }),
  'x-gitea-event': z.string().optional().meta({ description: 'Gitea: push' }),
  'x-gitea-delivery': z.string().optional().meta({ description: 'Gitea: the delivery ID' }),
  'x-slipway-signature': z.string().optional().meta({
    description: 'Generic: sha256=<hex HMAC-SHA256 of "<X-Slipway-Timestamp>.<raw body>">',
  }),
  'x-slipway-timestamp': z
    .string()
    .optional()
    .meta({ description: 'Generic: Unix seconds, at most 5 minutes from the server’s clock' }),
  'x-slipway-delivery': z.string().optional().meta({ description: 'Generic: the delivery ID' }),
  'x-slipway-event': z.string().optional().meta({ description: 'Generic: push (the default)' }),
});

/** The part of a push payload that is read; the rest of the provider's payload is ignored. */
export const PushPayload = z
  .looseObject({
    ref: z.string().meta({ description: 'refs/heads/<branch>: must be the bound branch' }),
    after: z.string().meta({ description: 'The commit pushed (full SHA); all zeros for a deleted branch' }),
    checkout_sha: z.string().nullable().optional().meta({ description: 'GitLab: the commit, preferred to after' }),
    deleted: z.boolean().optional().meta({ description: 'GitHub/Gitea: true for a deleted branch (ships nothing)' }),
  })
  .meta({ id: 'GitPushPayload' });

export const HookAnswer = z
  .object({
    id: z.uuid().nullable().meta({ description: 'The delivery as GET …/deliveries lists it (null: a duplicate)' }),
    outcome: z.enum(['shipped', 'ignored', 'duplicate']),
    reason: z.string().nullable(),
    releases: Delivery.shape.releases,
  })
  .meta({ id: 'GitHookAnswer' });
