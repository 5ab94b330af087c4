import { z } from 'zod';

import { ACTOR_TYPES, AUDIT_ORIGINS, OUTCOMES } from '@shared/audit/types';

import { queryInt } from '../../http/fields';

const id = z.string().min(1).max(200);

export const AuditQuery = z
  .object({
    actor: id.optional().meta({ description: 'A user ID or a token ID' }),
    action: z
      .string()
      .regex(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/, 'an action such as project.update')
      .optional(),
    resourceType: z
      .string()
      .regex(/^[a-z0-9-]+$/, 'a resource type such as deployment')
      .optional(),
    resourceId: id.optional(),
    projectId: id.optional(),
    outcome: z.enum(OUTCOMES).optional(),
    since: z.iso.datetime({ offset: true }).optional().meta({ description: 'Events at or after (ISO 8601)' }),
    until: z.iso.datetime({ offset: true }).optional().meta({ description: 'Events before (ISO 8601)' }),
    limit: queryInt(1, 100).default(50),
    cursor: z
      .string()
      .max(200)
      .optional()
      .meta({ description: 'nextCursor of the previous page; the filters must be the same' }),
  })
  .strict();

export const AuditEventView = z
  .object({
    id: z.string(),
    at: z.iso.datetime(),
    orgId: z.string(),
    projectId: z.string().nullable(),
    actor: z.object({
      type: z.enum(ACTOR_TYPES),
      userId: z.string().nullable(),
      tokenId: z.string().nullable(),
    }),
    action: z.string(),
    resource: z.object({ type: z.string(), id: z.string().nullable() }),
    changes: z
      .array(z.object({ field: z.string(), from: z.unknown(), to: z.unknown() }))
      .nullable()
      .meta({
        description:
          'What the change did, field by field (organisation settings, a ticket status): old and new values, never a secret; an empty list is an attempt that changed nothing. null where the route records no fields',
      }),
    outcome: z.enum(OUTCOMES),
    status: z.number().int(),
    origin: z.enum(AUDIT_ORIGINS),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
    requestId: z.string(),
  })
  .meta({ id: 'AuditEvent' });

export const AuditPage = z
  .object({
    events: z.array(AuditEventView),
    nextCursor: z.string().nullable().meta({ description: 'Pass as cursor for older events; null on the last page' }),
  })
  .meta({ id: 'AuditPage' });
