import { principalOf } from '../../http/auth';
import { limitKey, rateLimit } from '../../http/rate-limit';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import { domainProject, newDomainProject } from './access';
import type { DomainsContext } from './compose';
import { CreateDomainRequest, Domain, DomainIdParams, DomainList, DomainListQuery } from './schemas';
import { domainView } from './views';

/**
 * Custom domains: `/domains` adds one to a deployment and lists them, `/domains/:id` reads and deletes one, and
 * `/domains/:id/verify` checks its DNS now (3 per 5 minutes per user).
 */
export function domainRoutes(
  ctx: Pick<DomainsContext, 'domains' | 'deployments' | 'can' | 'limiters' | 'domainViewConfig'>,
): RouteDef[] {
  const { domains, can, domainViewConfig: cfg } = ctx;
  const tags = ['Domains'];
  const ofDomain = domainProject(domains);
  const view = (d: Parameters<typeof domainView>[0]) => domainView(d, cfg);
  return [
    route({
      method: 'post',
      path: '/domains',
      summary: 'Add a custom domain to a deployment; the answer lists the DNS records to create, then POST …/verify',
      description:
        'Ownership is a TXT record `_slipway-challenge.<hostname>` holding the answer’s token; routing is a CNAME to the deployment’s stable host (or A/AAAA to the edge router’s public addresses when listed). The domain is checked at once and then in the background (backing off from a minute to an hour) for 72 hours; once the TXT is found it is verified and served over HTTPS on the edge router. Missing routing records are a warning in lastCheck, never a refusal. A host another organisation has verified is refused (409); another organisation’s pending claim does not block you. The plan bounds how many domains the organisation holds (429 QUOTA_EXCEEDED).',
      tags,
      request: { body: CreateDomainRequest },
      before: [can('domain.manage', newDomainProject(ctx.deployments))],
      responses: {
        201: { description: 'The domain, pending, with the records to create', schema: success(Domain) },
        400: { description: 'INVALID_REQUEST: the host name is not one a domain can be (the message says why)' },
        404: { description: 'DEPLOYMENT_NOT_FOUND' },
        409: {
          description:
            'HOSTNAME_TAKEN: another organisation verified this host; CONFLICT: this organisation added it already',
        },
        429: { description: "QUOTA_EXCEEDED: the plan's domain count would be passed" },
      },
      handler: async ({ body }, req, res) => {
        res.status(201).json(ok(view(await domains.create(principalOf(req), body))));
      },
    }),
    route({
      method: 'get',
      path: '/domains',
      summary: 'List custom domains by host name, optionally of one deployment or project',
      tags,
      request: { query: DomainListQuery },
      before: [can('domain.read')],
      responses: { 200: { description: 'A page of domains', schema: success(DomainList) } },
      handler: async ({ query }, req, res) => {
        const { items, total } = await domains.list(principalOf(req), query);
        res.json(ok({ domains: items.map(view), total, limit: query.limit, offset: query.offset }));
      },
    }),
    route({
      method: 'get',
      path: '/domains/:id',
      summary: 'A custom domain: its status, whether it is routed, its DNS records and what the last check found',
      tags,
      request: { params: DomainIdParams },
      before: [can('domain.read', ofDomain)],
      responses: {
        200: { description: 'The domain', schema: success(Domain) },
        404: { description: 'DOMAIN_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(view(await domains.get(principalOf(req), params.id))));
      },
    }),
    route({
      method: 'delete',
      path: '/domains/:id',
      summary: 'Delete a custom domain: its route leaves the edge router and its host may be claimed again',
      tags,
      request: { params: DomainIdParams },
      before: [can('domain.manage', ofDomain)],
      responses: {
        200: { description: 'Deleted', schema: success(Domain) },
        404: { description: 'DOMAIN_NOT_FOUND' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(view(await domains.remove(principalOf(req), params.id))));
      },
    }),
    route({
      method: 'post',
      path: '/domains/:id/verify',
      summary: 'Check the domain’s DNS now and answer with what was found; a verified domain goes live on the edge',
      description:
        'Limited to 3 per 5 minutes per user (X-RateLimit-* headers; 429 with Retry-After beyond). verified: the TXT holds the token; the route is then added within seconds (`routed`). pending: lastCheck says what DNS holds. A failed domain (not verified within 72 hours) is checked again from here, and in the background for another 72 hours.',
      tags,
      request: { params: DomainIdParams },
      before: [rateLimit(ctx.limiters.domainVerification, limitKey.user), can('domain.manage', ofDomain)],
      responses: {
        200: { description: 'The domain after the check', schema: success(Domain) },
        404: { description: 'DOMAIN_NOT_FOUND' },
        409: { description: 'HOSTNAME_TAKEN: another organisation verified this host first' },
        429: { description: 'RATE_LIMIT_EXCEEDED: 3 domain verifications per user per 5 minutes; see Retry-After' },
      },
      handler: async ({ params }, req, res) => {
        res.json(ok(view((await domains.verify(principalOf(req), params.id)).domain)));
      },
    }),
  ];
}
