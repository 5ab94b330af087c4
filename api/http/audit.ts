import type { Request, RequestHandler, Response } from 'express';

import { auditEvent } from '@shared/audit/event';
import type { AuditStore } from '@shared/audit/store';
import type { AuditChange, AuditOrigin } from '@shared/audit/types';
import type { Logger } from '@shared/logger';

/** What a route may say about its audit event when the derivation from method and path is wrong. */
export interface AuditSpec {
  /** `<resource>.<verb>`; derived from the method and path when absent. */
  action?: string;
  /** The resource type; derived from the path when absent. */
  resource?: string;
  /** The field of the response (its `data`, or the body itself) carrying a created resource's ID. */
  idField?: string;
}

/** What the trail reads of a route (routes.ts): its method and path, and what it says about its event. */
export interface AuditedRoute {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  audit?: AuditSpec;
}

export interface AuditRecorder {
  store: Pick<AuditStore, 'append'>;
  log: Logger;
  origin: AuditOrigin;
}

const NOTE = 'auditNote';

/**
 * What the frame learns while serving (the project authorize resolved), or what a handler says its change did
 * (`changes`: each field's old and new value, never a secret): noted for the event.
 */
export function noteAudit(res: Response, note: { projectId?: string; changes?: AuditChange[] }): void {
  res.locals[NOTE] = { ...(res.locals[NOTE] as object | undefined), ...note };
}

interface Derived {
  action: string;
  resource: string;
  /** The path parameter naming the resource, or none (a creation: the ID comes from the response). */
  idParam?: string;
  /** The path parameter naming the project the resource sits in (`/projects/:id/...`). */
  projectParam?: string;
  idField?: string;
}

const singular = (s: string) =>
  s.endsWith('ies') ? `${s.slice(0, -3)}y` : s.endsWith('s') && !s.endsWith('ss') ? s.slice(0, -1) : s;
const VERB: Record<string, string> = { post: 'create', put: 'update', patch: 'update', delete: 'delete' };

/**
 * The event of a route, from its method and path, so routes need no edits: `DELETE /deployments/:id` is
 * deployment.delete of that deployment; `POST /deployments/:id/stop` is deployment.stop; `POST /projects` is
 * project.create of the ID in the response; `POST /projects/:id/members` (a plural after an ID) is member.create in
 * that project. A route whose path says it wrongly sets `audit` (e.g. POST /deploy → deployment.create).
 */
export function deriveAudit(r: AuditedRoute): Derived {
  const segs = r.path.split('/').filter(Boolean);
  const param = (s: string | undefined) => s?.startsWith(':') ?? false;
  const projectAt = segs.findIndex((s, i) => s === 'projects' && param(segs[i + 1]));
  const projectParam = projectAt >= 0 ? segs[projectAt + 1]!.slice(1) : undefined;
  const last = segs.at(-1) ?? '';
  const before = segs.at(-2);
  let d: Derived;
  if (param(last)) {
    d = { action: '', resource: singular(before ?? 'resource'), idParam: last.slice(1) };
    d.action = `${d.resource}.${VERB[r.method] ?? r.method}`;
  } else if (param(before)) {
    const parent = singular(segs.at(-3) ?? 'resource');
    if (r.method === 'post' && last.endsWith('s') && !last.endsWith('ss')) {
      d = { action: `${singular(last)}.create`, resource: singular(last) };
    } else {
      const verb = r.method === 'post' ? last : `${last}.${VERB[r.method] ?? r.method}`;
      d = { action: `${parent}.${verb}`, resource: parent, idParam: before!.slice(1) };
    }
  } else {
    d = { action: `${singular(last)}.${VERB[r.method] ?? r.method}`, resource: singular(last) };
  }
  const o = r.audit ?? {};
  return {
    ...d,
    ...(o.resource ? { resource: o.resource } : {}),
    action: o.action ?? (o.resource ? `${o.resource}.${d.action.split('.').at(-1)}` : d.action),
    ...(o.idField ? { idField: o.idField } : {}),
    ...(projectParam ? { projectParam } : {}),
  };
}

function createdId(body: unknown, d: Derived): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const data = typeof b.data === 'object' && b.data !== null ? (b.data as Record<string, unknown>) : b;
  for (const field of [d.idField, 'id', `${d.resource}Id`]) {
    // A dotted field reads into the answer (`database.id` of `{database: {id}}`).
    const v = field?.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], data);
    if (typeof v === 'string' && v) return v;
  }
  return undefined;
}

/** Longest a response waits for its audit write: a stalled database then costs a log line, not a hung client. */
const WAIT_MS = 5000;

/**
 * The audit event of every mutating route (docs/architecture.md, "Audit"), mounted by mountRoutes after authentication.
 * The event is written before the response ends (res.end waits for the insert): a client that saw its answer can read
 * the event at once, so the trail is never behind what callers observed — and it costs one insert, on writes only. A
 * failed write is logged and never fails the request. Bodies are never stored: only the path's IDs and a created
 * resource's ID, so no secret sent or returned (values, keys, tokens) can reach the trail; a handler may add what its
 * change did field by field (noteAudit), for fields that are never secret.
 */
export function auditTrail(recorder: AuditRecorder, r: AuditedRoute): RequestHandler | undefined {
  // Reads have no event, except one whose route asks for it: reading a secret (a database's credentials) is an act.
  if (r.method === 'get' && !r.audit) return undefined;
  const d = deriveAudit(r);
  return (req: Request, res: Response, next) => {
    const principal = req.principal;
    if (!principal) return next();
    // Express restores the parent's params once the error leaves this router: the route's own are read now.
    const params = { ...req.params } as Record<string, string | undefined>;
    let body: unknown;
    const json = res.json.bind(res);
    res.json = (b: unknown) => {
      body = b;
      return json(b);
    };
    let written: Promise<void> | undefined;
    const write = (status: number): Promise<void> => {
      written ??= (async () => {
        const note = (res.locals[NOTE] ?? {}) as { projectId?: string; changes?: AuditChange[] };
        const id = d.idParam ? params[d.idParam] : createdId(body, d);
        const projectId =
          note.projectId ??
          (d.projectParam ? params[d.projectParam] : undefined) ??
          (d.resource === 'project' ? id : undefined);
        const event = auditEvent({
          principal,
          origin: recorder.origin,
          action: d.action,
          resource: { type: d.resource, id },
          projectId,
          changes: note.changes,
          status,
          ip: req.ip,
          userAgent: req.get('user-agent'),
          requestId: String(req.id),
        });
        await recorder.store.append(event);
      })().catch((err: unknown) =>
        recorder.log.error({ err, requestId: String(req.id), action: d.action }, 'audit event not written'),
      );
      return written;
    };
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      if (written) return end(...args);
      let timer: NodeJS.Timeout | undefined;
      const cap = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, WAIT_MS);
      });
      void Promise.race([write(res.statusCode), cap]).then(() => {
        clearTimeout(timer);
        end(...args);
      });
      return res;
    }) as Response['end'];
    // A client gone before the answer: the attempt is still recorded (as a failure: it got no answer).
    res.on('close', () => {
      if (!written) void write(499);
    });
    next();
  };
}
