import { randomUUID } from 'node:crypto';

import type { Principal } from '../identity/service';
import type { AuditChange, AuditEvent, AuditOrigin, Outcome } from './types';

/**
 * 403, and 404 (a 404 on a write always means "names something you cannot reach": another organisation's resource,
 * a project you are not in, or nothing): refused for access. Looking the ID up across organisations to tell those
 * apart would be a cross-tenant read on every refusal, so they read the same.
 */
export function outcomeOf(status: number): Outcome {
  if (status < 400) return 'success';
  return status === 403 || status === 404 ? 'denied' : 'failure';
}

/** A user agent is the caller's text: kept, but never longer than this. */
const USER_AGENT_MAX = 512;

/**
 * One event as a route or an MCP tool call records it: the calling token as the actor, the outcome read from the
 * status answered (MCP: the status the same operation answers over REST).
 */
export function auditEvent(e: {
  principal: {
    org: Pick<Principal['org'], '_id'>;
    user: Pick<Principal['user'], '_id'>;
    token: Pick<Principal['token'], '_id'>;
  };
  origin: AuditOrigin;
  action: string;
  resource: { type: string; id?: string | undefined };
  projectId?: string | undefined;
  changes?: AuditChange[] | undefined;
  status: number;
  ip?: string | undefined;
  userAgent?: string | undefined;
  requestId: string;
}): AuditEvent {
  const { principal, resource } = e;
  return {
    _id: randomUUID(),
    at: new Date(),
    orgId: principal.org._id,
    ...(e.projectId ? { projectId: e.projectId } : {}),
    actor: { type: 'token', userId: principal.user._id, tokenId: principal.token._id },
    action: e.action,
    resource: { type: resource.type, ...(resource.id ? { id: resource.id } : {}) },
    ...(e.changes ? { changes: e.changes } : {}),
    outcome: outcomeOf(e.status),
    status: e.status,
    origin: e.origin,
    ...(e.ip ? { ip: e.ip } : {}),
    ...(e.userAgent ? { userAgent: e.userAgent.slice(0, USER_AGENT_MAX) } : {}),
    requestId: e.requestId,
  };
}
