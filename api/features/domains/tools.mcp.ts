import { z } from 'zod';

import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { ignore } from '@shared/ignore';

import { consumeLimit } from '../../mcp/limit';
import { defineTool, Next, READ, type ToolDef, WRITE } from '../../mcp/tool';
import { confirmations } from '../deployments/tools-destroy.mcp';
import type { DomainsContext } from './compose';
import { CreateDomainRequest, Domain, DomainListQuery } from './schemas';
import { domainView } from './views';

const DomainRef = z.object({ domainId: z.uuid('a domain ID in UUID format') });

/** What an agent needs of custom domains: add one, see the records to create, verify, list, remove. */
export function domainTools(
  deps: Pick<DomainsContext, 'domains' | 'deployments' | 'limiters' | 'config' | 'domainViewConfig'>,
): ToolDef[] {
  const { domains } = deps;
  const view = (d: Parameters<typeof domainView>[0]) => domainView(d, deps.domainViewConfig);
  // The same confirmations as destroy_deployment, bound to "domain:<id>" so one never confirms the other.
  const confirms = confirmations(deps.config.SECRETS_KEY);
  const ofDomain = async (p: Principal, input: { domainId: string }) =>
    (await domains.get(p, input.domainId).catch(ignore('an unknown domain is the handler’s 404', undefined)))
      ?.projectId ?? undefined;
  return [
    defineTool({
      name: 'list_domains',
      title: 'List custom domains',
      description:
        'Custom domains with their status (pending, verified, failed), whether they are routed, and their DNS records.',
      permission: 'domain.read',
      input: DomainListQuery,
      output: z.object({ domains: z.array(Domain), total: z.number().int() }),
      annotations: READ,
      run: async ({ principal, input }) => {
        const { items, total } = await domains.list(principal, input);
        return { domains: items.map(view), total };
      },
    }),
    defineTool({
      name: 'add_domain',
      title: 'Add a custom domain',
      description:
        'Adds hostname to a deployment. The answer lists dnsRecords to create at the DNS provider: a TXT proving ' +
        'ownership (required) and a CNAME routing traffic. Then call verify_domain. Wildcards, IP addresses and the ' +
        'service’s own domain are refused.',
      permission: 'domain.manage',
      project: async (p, input) =>
        (
          await deps.deployments
            .get(p, input.deploymentId)
            .catch(ignore('an unknown deployment is the handler’s 404', undefined))
        )?.projectId ?? undefined,
      input: CreateDomainRequest,
      output: z.object({ domain: Domain, next: Next }),
      annotations: { ...WRITE, openWorldHint: false },
      audit: { resource: 'domain', id: (_i, out) => out?.domain.id },
      run: async ({ principal, input }) => {
        const d = view(await domains.create(principal, input));
        return {
          domain: d,
          next: { tool: 'verify_domain', arguments: { domainId: d.id }, why: 'Once the DNS records exist, verify.' },
        };
      },
    }),
    defineTool({
      name: 'verify_domain',
      title: 'Verify a custom domain',
      description:
        'Checks the domain’s DNS now (3 per 5 minutes per user). verified: it is served over HTTPS once routed is ' +
        'true (seconds); pending: lastCheck.message says what DNS holds and what to change.',
      permission: 'domain.manage',
      project: ofDomain,
      input: DomainRef,
      output: z.object({ domain: Domain }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      audit: { resource: 'domain', id: (i) => i.domainId },
      run: async ({ principal, input }) => {
        await consumeLimit(deps.limiters.domainVerification, `user:${principal.user._id}`);
        return { domain: view((await domains.verify(principal, input.domainId)).domain) };
      },
    }),
    defineTool({
      name: 'remove_domain',
      title: 'Remove a custom domain',
      description:
        'Removes a custom domain in two calls. The first (without confirm) changes nothing: it returns the domain and ' +
        'a confirm token; call again with it to remove the domain, after which the host is no longer served.',
      permission: 'domain.manage',
      project: ofDomain,
      input: DomainRef.extend({
        confirm: z
          .string()
          .max(200)
          .optional()
          .meta({ description: 'The confirm token of this domain’s preview; absent: get the preview' }),
      }),
      output: z.object({
        domain: Domain,
        removed: z.boolean(),
        confirm: z.string().optional(),
        expiresAt: z.iso.datetime().optional(),
        next: Next.optional(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
      audit: { resource: 'domain', id: (i) => i.domainId, skip: (i) => i.confirm === undefined },
      run: async ({ principal, input }) => {
        const key = `domain:${input.domainId}`;
        if (input.confirm === undefined) {
          const d = await domains.get(principal, input.domainId);
          const { confirm, expiresAt } = confirms.issue(key, principal.token._id);
          return {
            domain: view(d),
            removed: false,
            confirm,
            expiresAt: expiresAt.toISOString(),
            next: {
              tool: 'remove_domain',
              arguments: { domainId: input.domainId, confirm },
              why: `Removes ${d.hostname}: it stops being served. Once the user agrees.`,
            },
          };
        }
        if (!confirms.check(input.confirm, key, principal.token._id)) {
          throw new AppError(
            'INVALID_REQUEST',
            'The confirm token is expired, or was not issued for this domain and token; nothing was removed.',
            {
              domainId: input.domainId,
              next: { tool: 'remove_domain', arguments: { domainId: input.domainId }, why: 'Get a new confirm.' },
            },
          );
        }
        return { domain: view(await domains.remove(principal, input.domainId)), removed: true };
      },
    }),
  ];
}
