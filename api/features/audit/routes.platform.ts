import type { AuditEvent } from '@shared/audit/types';
import { AppError } from '@shared/errors';

import { principalOf } from '../../http/auth';
import { route, type RouteDef } from '../../http/routes';
import { ok, success } from '../../http/shapes';
import type { FeatureContext } from '../feature';
import { AuditPage, AuditQuery } from './schemas';

const view = (e: AuditEvent) => ({
  id: e._id,
  at: e.at.toISOString(),
  orgId: e.orgId,
  projectId: e.projectId ?? null,
  actor: { type: e.actor.type, userId: e.actor.userId ?? null, tokenId: e.actor.tokenId ?? null },
  action: e.action,
  resource: { type: e.resource.type, id: e.resource.id ?? null },
  changes: e.changes ?? null,
  outcome: e.outcome,
  status: e.status,
  origin: e.origin,
  ip: e.ip ?? null,
  userAgent: e.userAgent ?? null,
  requestId: e.requestId,
});

/** The cursor is the last event's position (at, _id), opaque to callers so its shape can change. */
const encodeCursor = (e: AuditEvent) => Buffer.from(JSON.stringify([e.at.getTime(), e._id])).toString('base64url');

function decodeCursor(cursor: string): { at: Date; id: string } {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof at === 'number' && Number.isFinite(at) && typeof id === 'string' && id) return { at: new Date(at), id };
  } catch {
    // Not base64url JSON: a cursor this api did not write, refused below like any other malformed one.
  }
  throw new AppError('INVALID_REQUEST', 'Invalid cursor: pass the nextCursor of a previous page unchanged.');
}

/** The audit trail, read only: no route of any origin edits or deletes an event. */
export function auditRoutes(ctx: Pick<FeatureContext, 'auditTrail' | 'can'>): RouteDef[] {
  return [
    route({
      method: 'get',
      path: '/audit',
      summary: "The organisation's audit trail, newest first",
      description:
        'Every mutating call of every origin, with its outcome: success, failure, or denied (403, or 404 on something ' +
        'the caller cannot reach). Events hold no request or response body. Owners and admins only (audit.read).',
      tags: ['Audit'],
      request: { query: AuditQuery },
      before: [ctx.can('audit.read')],
      responses: { 200: { description: 'A page of events', schema: success(AuditPage) } },
      handler: async ({ query }, req, res) => {
        const events = await ctx.auditTrail.list({
          orgId: principalOf(req).org._id,
          actor: query.actor,
          action: query.action,
          resourceType: query.resourceType,
          resourceId: query.resourceId,
          projectId: query.projectId,
          outcome: query.outcome,
          since: query.since ? new Date(query.since) : undefined,
          until: query.until ? new Date(query.until) : undefined,
          after: query.cursor ? decodeCursor(query.cursor) : undefined,
          // One more than asked: whether a next page exists, without a count.
          limit: query.limit + 1,
        });
        const page = events.slice(0, query.limit);
        const more = events.length > query.limit;
        res.json(ok({ events: page.map(view), nextCursor: more ? encodeCursor(page.at(-1)!) : null }));
      },
    }),
  ];
}
