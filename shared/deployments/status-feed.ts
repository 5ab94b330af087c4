import type { Redis } from '../redis';

/**
 * Tells waiting requests that a deployment's record changed, so a long-poll answers as soon as the status does
 * instead of on its next look at the database. A hint, not a source of truth: the waiter always re-reads the record,
 * and looks again every `recheckMs` anyway, so a lost message (Redis restarting) costs latency, never a wrong answer.
 */
export function createStatusFeed(deps: { redis: Redis; keyPrefix: string; recheckMs?: number }) {
  const channel = (deploymentId: string) => `${deps.keyPrefix}deployment-status:${deploymentId}`;
  const recheckMs = deps.recheckMs ?? 1000;
  // One subscriber connection per process (a subscribed connection can run no other command), made on first watch.
  let subscriber: Redis | undefined;
  const watchers = new Map<string, Set<() => void>>();

  function connect(): Redis {
    if (subscriber) return subscriber;
    subscriber = deps.redis.duplicate();
    // Ends with the connection it was made from, so whoever closes that one (server, tests) closes both.
    deps.redis.once('end', () => {
      subscriber?.disconnect();
      subscriber = undefined;
    });
    subscriber.on('message', (ch: string) => {
      for (const changed of watchers.get(ch) ?? []) changed();
    });
    // A failed subscription only makes waits fall back to rechecking; its error must not end the process.
    subscriber.on('error', () => undefined);
    return subscriber;
  }

  return {
    /** Called after a status change is written. */
    async publish(deploymentId: string): Promise<void> {
      await deps.redis.publish(channel(deploymentId), '1');
    },

    /**
     * Starts listening before the caller's first read, so no change between that read and the wait is missed.
     * `changed(maxMs)` resolves once the record may have changed since the last call (at once if it already did),
     * or after `recheckMs`, or `maxMs`, whichever comes first.
     */
    async watch(deploymentId: string) {
      const ch = channel(deploymentId);
      const sub = connect();
      let dirty = false;
      let wake: (() => void) | undefined;
      const onChange = () => {
        dirty = true;
        wake?.();
      };
      let set = watchers.get(ch);
      if (!set) {
        set = new Set();
        watchers.set(ch, set);
      }
      set.add(onChange);
      if (set.size === 1) await sub.subscribe(ch).catch(() => undefined);
      const own = set;
      return {
        async changed(maxMs: number): Promise<void> {
          if (dirty) {
            dirty = false;
            return;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              wake = undefined;
              resolve();
            }, Math.max(0, Math.min(maxMs, recheckMs)));
            wake = () => {
              clearTimeout(timer);
              wake = undefined;
              dirty = false;
              resolve();
            };
          });
        },
        close(): void {
          own.delete(onChange);
          if (own.size === 0 && watchers.get(ch) === own) {
            watchers.delete(ch);
            void sub.unsubscribe(ch).catch(() => undefined);
          }
        },
      };
    },
  };
}

export type StatusFeed = ReturnType<typeof createStatusFeed>;

/**
 * The store as the worker uses it, announcing each status change after it is written. A failed announcement is
 * ignored: waiters recheck the record on their own (above), so it costs them latency, never the write.
 */
export function announcingStatus<S extends { recordStatus(change: { deploymentId: string }): Promise<unknown> }>(
  store: S,
  feed: Pick<StatusFeed, 'publish'> | undefined,
): S {
  if (!feed) return store;
  const recordStatus: S['recordStatus'] = async (change) => {
    const written = await store.recordStatus(change);
    await feed.publish(change.deploymentId).catch(() => undefined);
    return written;
  };
  return Object.assign(Object.create(store) as S, store, { recordStatus });
}
