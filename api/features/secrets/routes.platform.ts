import { AppError } from '@shared/errors';
import type { SecretSummary as Summary } from '@shared/secrets/vault';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { success } from '../../http/shapes';
import type { FeatureContext } from '../feature';
import { CreateSecretRequest, ReplaceSecretRequest, SecretIdParams, SecretSummary } from './schemas';

const view = (s: Summary) => ({
  id: s._id,
  name: s.name,
  environment: s.environment,
  ...(s.allowedHosts ? { allowedHosts: s.allowedHosts } : {}),
  createdAt: s.createdAt.toISOString(),
  updatedAt: s.updatedAt?.toISOString() ?? null,
});

/** The vault: values go in and are used by builds (private repositories); no route ever returns one. */
export function secretRoutes(deps: Pick<FeatureContext, 'vault' | 'can' | 'orgSettings'>): RouteDef[] {
  const { vault } = deps;
  const tags = ['Secrets'];
  return [
    route({
      method: 'post',
      path: '/secrets',
      summary: 'Store a secret (e.g. a Git token); the value is encrypted and never shown again',
      tags,
      request: { body: CreateSecretRequest },
      before: [deps.can('secret.manage')],
      responses: {
        200: { description: 'Stored', schema: success(SecretSummary) },
        409: { description: 'A secret of that name already exists in that environment' },
      },
      handler: async ({ body }, req, res) => {
        const p = principalOf(req);
        const environment = body.environment ?? (await deps.orgSettings.of(p.org._id)).defaultVaultEnvironment;
        const s = await vault.create({ orgId: p.org._id, userId: p.user._id, ...body, environment });
        res.json({ status: 'success', data: view(s) });
      },
    }),
    route({
      method: 'get',
      path: '/secrets',
      summary: "List the organisation's secrets (names, never values)",
      tags,
      request: {},
      before: [deps.can('secret.manage')],
      responses: { 200: { description: 'Secrets', schema: success(SecretSummary.array()) } },
      handler: async (_input, req, res) => {
        res.json({ status: 'success', data: (await vault.list(principalOf(req).org._id)).map(view) });
      },
    }),
    route({
      method: 'put',
      path: '/secrets/:id',
      summary: "Replace a secret's value (rotation); the new value is encrypted and never shown again",
      description: 'Builds use the new value from now on; the ID, name, environment and allowed hosts stay.',
      tags,
      request: { params: SecretIdParams, body: ReplaceSecretRequest },
      before: [deps.can('secret.manage')],
      responses: { 200: { description: 'Replaced', schema: success(SecretSummary) } },
      handler: async ({ params, body }, req, res) => {
        const s = await vault.replaceValue(principalOf(req).org._id, params.id, body.value);
        if (!s) throw new AppError('SECRET_NOT_FOUND', `No secret ${params.id} in this organisation.`);
        res.json({ status: 'success', data: view(s) });
      },
    }),
    route({
      method: 'delete',
      path: '/secrets/:id',
      summary: 'Delete a secret',
      tags,
      request: { params: SecretIdParams },
      before: [deps.can('secret.manage')],
      responses: { 204: { description: 'Deleted' } },
      handler: async ({ params }, req, res) => {
        if (!(await vault.remove(principalOf(req).org._id, params.id))) {
          throw new AppError('SECRET_NOT_FOUND', `No secret ${params.id} in this organisation.`);
        }
        res.status(204).end();
      },
    }),
  ];
}
