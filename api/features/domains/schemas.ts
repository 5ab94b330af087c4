import { z } from 'zod';

import { queryInt } from '../../http/fields';

/**
 * Checked for shape here (the OpenAPI document says it); the real rules (IDNA, labels, wildcards, IP literals, the
 * service's own domain) are shared/domains/hostname.ts, whose refusals are 400 with the reason.
 */
const hostname = z
  .string()
  .min(1, 'a host name such as "www.example.com"')
  .max(253, 'a host name is at most 253 characters')
  .meta({
    description:
      'The host to serve the deployment at, e.g. "www.example.com" (international names are converted to punycode; upper case is lowered). Refused: wildcards ("*."), IP addresses, single labels, public suffixes alone, names under the service’s own domain or localhost.',
    example: 'www.example.com',
  });

export const CreateDomainRequest = z
  .object({
    hostname,
    deploymentId: z.uuid('a deployment ID in UUID format').meta({ description: 'The deployment the domain serves' }),
  })
  .strict()
  .meta({ id: 'CreateDomainRequest' });

export const DomainIdParams = z.object({ id: z.uuid('a domain ID in UUID format') });

export const DomainListQuery = z
  .object({
    deploymentId: z.uuid('a deployment ID in UUID format').optional(),
    projectId: z.uuid('a project ID in UUID format').optional(),
    limit: queryInt(1, 100).default(20),
    offset: queryInt(0, 1_000_000).default(0),
  })
  .strict();

const DnsRecord = z
  .object({
    type: z.enum(['TXT', 'CNAME', 'A', 'AAAA']),
    name: z.string(),
    value: z.string(),
    purpose: z.enum(['ownership', 'routing']).meta({
      description:
        'ownership: the TXT that verifies the domain (required). routing: where traffic goes; the CNAME, or where a CNAME cannot be (a zone apex) the A/AAAA records when listed. Missing routing is a warning, never a refusal.',
    }),
  })
  .meta({ id: 'DnsRecord' });

export const DomainCheck = z
  .object({
    at: z.iso.datetime(),
    txt: z.enum(['found', 'missing', 'other', 'error']).meta({
      description:
        'The ownership TXT: found (holds the token), missing, other (holds another value), error (DNS did not answer)',
    }),
    routing: z.enum(['cname', 'address', 'missing', 'elsewhere', 'error']),
    message: z.string().meta({ description: 'What the check found, and what to do' }),
  })
  .meta({ id: 'DomainCheck' });

export const Domain = z
  .object({
    id: z.uuid(),
    hostname: z.string(),
    deploymentId: z.uuid(),
    projectId: z.uuid().nullable(),
    status: z.enum(['pending', 'verified', 'failed']).meta({
      description:
        'pending: the TXT record has not been found yet (checked in the background, backing off, for 72 hours); verified: ownership proven; failed: not verified within the window (fix the records and POST …/verify)',
    }),
    routed: z.boolean().meta({ description: 'The edge router serves the domain over HTTPS (only once verified)' }),
    url: z.string().meta({ description: 'Where the domain is served once verified and routed' }),
    token: z.string().meta({ description: 'The value the ownership TXT record must hold' }),
    dnsRecords: z.array(DnsRecord),
    lastCheck: DomainCheck.nullable(),
    verifiedAt: z.iso.datetime().nullable(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Domain' });

export const DomainList = z.object({
  domains: z.array(Domain),
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
});
