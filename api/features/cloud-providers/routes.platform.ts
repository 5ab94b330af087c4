import { noteAudit } from '../../http/audit';
import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { CloudProvidersContext } from './compose';
import { CloudCredentialsSummary, ProviderParams, PutCredentialsRequest } from './schemas';

/** Cloud credentials: set and replaced by owners and admins, never read back; members see which exist. */
export function cloudProviderRoutes(ctx: Pick<CloudProvidersContext, 'cloudProviders' | 'can'>): RouteDef[] {
  const { cloudProviders, can } = ctx;
  const tags = ['Providers'];
  return [
    route({
      method: 'get',
      path: '/providers/credentials',
      summary: 'The clouds the organisation has credentials for (who they sign in as, their regions; never a secret)',
      tags,
      request: {},
      before: [can('organization.read')],
      responses: {
        200: { description: 'One entry per cloud with credentials', schema: success(CloudCredentialsSummary.array()) },
      },
      handler: async (_input, req, res) => {
        res.json(ok(await cloudProviders.list(principalOf(req))));
      },
    }),
    route({
      method: 'put',
      path: '/providers/:provider/credentials',
      summary: 'Set or replace the organisation’s credentials for a cloud (owners and admins; write-only)',
      description:
        'The credentials are tried first with a read-only call to the cloud (list services in each region, or the equivalent); only credentials that work are saved, sealed in the vault, and they replace any set before. From then on GET /compat/providers shows the cloud as available, with the regions given, and deploys may name it. Nothing secret is ever returned.',
      tags,
      request: { params: ProviderParams, body: PutCredentialsRequest },
      before: [can('organization.manage')],
      responses: {
        200: { description: 'Saved; what may be shown of them', schema: success(CloudCredentialsSummary) },
        400: {
          description:
            'INVALID_REQUEST: the body is not the cloud’s credentials shape; CLOUD_CREDENTIALS_REFUSED: the cloud refused them (the message says why and what to do), nothing was saved',
        },
        502: {
          description: 'CLOUD_UNREACHABLE: the cloud’s API did not answer the check; nothing was saved, try again',
        },
      },
      handler: async ({ params, body }, req, res) => {
        const summary = await cloudProviders.put(principalOf(req), params.provider, body);
        noteAudit(res, { changes: [{ field: 'credentials', from: null, to: summary.identity }] });
        res.json(ok(summary));
      },
    }),
    route({
      method: 'get',
      path: '/providers/:provider/credentials',
      summary: 'What may be shown of the organisation’s credentials for a cloud (never a secret)',
      tags,
      request: { params: ProviderParams },
      before: [can('organization.read')],
      responses: {
        200: { description: 'The credentials’ summary', schema: success(CloudCredentialsSummary) },
        404: { description: 'CLOUD_CREDENTIALS_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(await cloudProviders.get(principalOf(req), params.provider)));
      },
    }),
    route({
      method: 'delete',
      path: '/providers/:provider/credentials',
      summary: 'Remove the organisation’s credentials for a cloud (owners and admins)',
      tags,
      request: { params: ProviderParams },
      before: [can('organization.manage')],
      responses: {
        204: { description: 'Removed; the cloud is no longer available to new deploys' },
        404: { description: 'CLOUD_CREDENTIALS_NOT_FOUND' },
        409: { description: 'CONFLICT: deployments run on that cloud; destroy them first' },
      },
      handler: async ({ params }, req, res) => {
        await cloudProviders.remove(principalOf(req), params.provider);
        res.status(204).end();
      },
    }),
  ];
}
