import { noteAudit } from '../../http/audit';
import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { OrganizationContext } from './compose';
import { Organization, UpdateOrganizationRequest } from './schemas';
import { organizationView } from './views';

/** The organisation's own settings: read by every member, changed by owners and admins. */
export function organizationRoutes(
  ctx: Pick<OrganizationContext, 'organization' | 'sellerSettings' | 'can' | 'config'>,
): RouteDef[] {
  const { organization, sellerSettings, can, config } = ctx;
  const tags = ['Organisation'];
  const defaults = { sandboxIdleS: config.SANDBOX_IDLE_S, engineRegion: config.ENGINE_REGION };
  return [
    route({
      method: 'get',
      path: '/organization',
      summary: 'The organisation’s settings, what applies now, and the seller settings (never a secret)',
      tags,
      request: {},
      before: [can('organization.read')],
      responses: { 200: { description: 'The settings', schema: success(Organization) } },
      handler: async (_input, req, res) => {
        const { org } = principalOf(req);
        const [current, seller] = await Promise.all([organization.current(org), sellerSettings.getSeller(org._id)]);
        res.json(ok(organizationView(org, current, seller, defaults)));
      },
    }),
    route({
      method: 'patch',
      path: '/organization',
      summary: 'Change the organisation’s settings (owners and admins)',
      description:
        'Only the fields given change. Each change is a new version of the settings: two changes at once both land (the later is applied on top of the earlier), never one silently lost. A request that changes nothing answers 200 and writes no version; its audit event lists no change. Every change’s audit event lists each changed field with its old and new value. The seller settings are changed with the /platform/sales routes.',
      tags,
      request: { body: UpdateOrganizationRequest },
      before: [can('organization.manage')],
      responses: {
        200: { description: 'The settings after the change', schema: success(Organization) },
        400: {
          description:
            'INVALID_REQUEST: an unknown field, providers the plan or each other refuse, or a defaultRegion the default provider does not have',
        },
        409: { description: 'CONFLICT: the settings kept changing meanwhile; retry' },
      },
      audit: { idField: 'id' },
      handler: async ({ body }, req, res) => {
        const p = principalOf(req);
        const updated = await organization.update(p, body);
        noteAudit(res, { changes: updated.changes });
        const seller = await sellerSettings.getSeller(p.org._id);
        const org = { ...p.org, name: updated.settings.name };
        res.json(ok(organizationView(org, updated, seller, defaults)));
      },
    }),
  ];
}
