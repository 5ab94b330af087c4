import type { StatusModel, StatusSnapshot } from '@shared/deployments/read-model';
import type { Logger } from '@shared/logger';
import type { Redis } from '@shared/redis';

/** What the organisation-wide stream says: a deployment's status changed, or it was destroyed. */
export type OrgEvent =
  | { type: 'status'; data: { deploymentId: string; status: string; message: string; at: string } }
  | { type: 'destroyed'; data: { deploymentId: string } }
  /** The process lost Redis for a while: changes may have been missed, so the client reads the list again. */
  | { type: 'resync'; data: { reason: string } };

/** One open stream: whose it is and which of its organisation's projects it may see. */
export interface OrgListener {
  orgId: string;
  sees(projectId: string | undefined): boolean | Promise<boolean>;
  send(event: OrgEvent): void;
}

/** Deployments remembered (organisation, project, last status sent) so a destroy can still be routed to its org. */
const KNOWN_MAX = 10_000;

/** A glob pattern's special characters, escaped: the key prefix is configuration, not a pattern. */
const literal = (s: string) => s.replace(/[*?[\]\\]/g, '\\$&');

/**
 * Status changes of every deployment, for the streams that follow a whole organisation (the console's list). Each
 * api process holds ONE pattern subscription to the deployments' announcement channels (shared/deployments/
 * status-feed.ts), made on the first stream; an announcement is read once from the status read model, whatever
 * the number of streams, and handed only to the streams of the deployment's organisation that may see its project.
 */
export function createOrgStatusHub(deps: {
  redis: Redis;
  keyPrefix: string;
  model: Pick<StatusModel, 'read' | 'fill'>;
  log: Pick<Logger, 'warn'>;
}) {
  const prefix = `${deps.keyPrefix}deployment-status:`;
  const listeners = new Set<OrgListener>();
  const known = new Map<string, { orgId: string; projectId?: string; sent: string }>();
  /** Per deployment, the delivery under way: announcements of one deployment are delivered in order. */
  const chains = new Map<string, Promise<void>>();
  let subscribed: Promise<void> | undefined;

  async function route(orgId: string, projectId: string | undefined, event: OrgEvent) {
    for (const l of listeners) {
      if (l.orgId !== orgId) continue;
      // A stream never hears of a deployment of a project its caller cannot see, nor of another organisation's.
      if (await l.sees(projectId)) l.send(event);
    }
  }

  function remember(id: string, entry: { orgId: string; projectId?: string; sent: string }) {
    known.delete(id);
    known.set(id, entry);
    if (known.size > KNOWN_MAX) known.delete(known.keys().next().value as string);
  }

  async function deliver(id: string, what: string) {
    const before = known.get(id);
    const entry = what === 'destroyed' ? ({ gone: true } as const) : await deps.model.read(id);
    let snapshot: StatusSnapshot | undefined;
    if ('found' in entry) snapshot = entry.found;
    else if ('missing' in entry) snapshot = await deps.model.fill(id);
    if (!snapshot) {
      if (!before) return;
      known.delete(id);
      await route(before.orgId, before.projectId, { type: 'destroyed', data: { deploymentId: id } });
      return;
    }
    const r = snapshot.record;
    const last = r.events.at(-1);
    const data = {
      deploymentId: id,
      status: r.status,
      message: last?.message ?? '',
      at: (last?.at ?? r.updatedAt).toISOString(),
    };
    const sent = `${data.status}|${data.at}|${r.events.length}`;
    // Log lines and release writes announce too: only a status that changed is worth a message.
    if (before?.sent === sent) return;
    remember(id, { orgId: r.orgId, ...(r.projectId ? { projectId: r.projectId } : {}), sent });
    await route(r.orgId, r.projectId, { type: 'status', data });
  }

  function announced(channel: string, message: string) {
    if (listeners.size === 0 || !channel.startsWith(prefix) || message === 'log') return;
    const id = channel.slice(prefix.length);
    const next = (chains.get(id) ?? Promise.resolve())
      .then(() => deliver(id, message))
      .catch((err: unknown) => deps.log.warn({ err, deploymentId: id }, 'organisation status event not delivered'))
      .finally(() => {
        if (chains.get(id) === next) chains.delete(id);
      });
    chains.set(id, next);
  }

  function connect(): Promise<void> {
    if (subscribed) return subscribed;
    // No ready check, as in the status feed: a subscribed connection refuses the check's INFO.
    const sub = deps.redis.duplicate({ enableReadyCheck: false });
    deps.redis.once('end', () => sub.disconnect());
    sub.on('pmessage', (_pattern: string, channel: string, message: string) => announced(channel, message));
    let connectedBefore = false;
    sub.on('ready', () => {
      // What was announced while the connection was down reached nobody here: the streams read the list again.
      if (connectedBefore)
        for (const l of listeners) l.send({ type: 'resync', data: { reason: 'the server reconnected to Redis' } });
      connectedBefore = true;
    });
    sub.on('error', (err: unknown) => deps.log.warn({ err }, 'organisation status subscription failed'));
    subscribed = sub.psubscribe(`${literal(prefix)}*`).then(
      () => undefined,
      (err: unknown) => {
        subscribed = undefined;
        sub.disconnect();
        throw err;
      },
    );
    return subscribed;
  }

  return {
    /** Resolves once this process's subscription is confirmed: a change written after that reaches the listener. */
    async listen(listener: OrgListener): Promise<() => void> {
      await connect();
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}

export type OrgStatusHub = ReturnType<typeof createOrgStatusHub>;
