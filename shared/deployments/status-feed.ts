import { ignore } from '../ignore';
import type { Logger } from '../logger';
import type { Redis } from '../redis';
import type { LogStore } from './logs-store';
import type { StatusModel } from './read-model';

/** What a message on a deployment's channel says happened; a wait for a status sleeps through log lines. */
export type Announcement = 'status' | 'log' | 'destroyed';
type Wake = Announcement | 'recheck';

const ANNOUNCEMENTS: readonly string[] = ['status', 'log', 'destroyed'] satisfies Announcement[];

/**
 * How often a watched deployment's watchers look again with no announcement: what a lost message costs at most
 * (a process that stopped between its write and its announcement). Redis reconnecting wakes them at once instead.
 * One timer per deployment, however many streams and waits hold it.
 */
const RECHECK_MS = 30_000;
/** After a failed subscription, how soon it is tried again: meanwhile its watchers have only the recheck. */
const RESUBSCRIBE_MS = 1_000;

interface Topic {
  listeners: Set<(what: Wake) => void>;
  /** Settles once Redis confirmed the subscription; false if it failed (then it is tried again shortly). */
  subscribed: Promise<boolean>;
  /** Confirmed: until then, or after a failure, nothing tells when a shared read went stale, so none is shared. */
  live: boolean;
  /** Counts wakes: a read started in the same generation saw every write announced to this process so far. */
  generation: number;
  reads: Map<string, Promise<unknown>>;
  timer: NodeJS.Timeout;
}

/**
 * Tells the requests following a deployment (event streams, `?wait=` reads) that its record or its log changed, so
 * they answer as soon as it does instead of on a look at the database. A hint, not a source of truth: watchers
 * re-read the record when woken. An idle watcher costs no read at all: each api process holds one Redis
 * subscription and one recheck timer per watched deployment, shared by all its watchers, and the reads a wake
 * causes are shared too (`read`), so a hundred streams of one deployment cost what one does.
 */
export function createStatusFeed(deps: {
  redis: Redis;
  keyPrefix: string;
  recheckMs?: number;
  log?: Pick<Logger, 'warn'>;
}) {
  const channel = (deploymentId: string) => `${deps.keyPrefix}deployment-status:${deploymentId}`;
  const recheckMs = deps.recheckMs ?? RECHECK_MS;
  // One subscriber connection per process (a subscribed connection can run no other command), made on first watch.
  let subscriber: Redis | undefined;
  const topics = new Map<string, Topic>();

  function wake(topic: Topic, what: Wake) {
    topic.generation++;
    topic.reads.clear();
    for (const listener of topic.listeners) listener(what);
  }

  function connect(): Redis {
    if (subscriber) return subscriber;
    // No ready check: SUBSCRIBE may go out during the handshake (ioredis lets it through, like any command Redis
    // serves while loading), and once its answer puts the connection in subscriber mode the check's INFO is refused,
    // which fails the connection and every subscription on it. A subscriber has nothing to wait for in the check.
    const sub = deps.redis.duplicate({ enableReadyCheck: false });
    subscriber = sub;
    // Ends with the connection it was made from, so whoever closes that one (server, tests) closes both.
    deps.redis.once('end', () => {
      sub.disconnect();
      if (subscriber === sub) subscriber = undefined;
    });
    sub.on('message', (ch: string, message: string) => {
      const topic = topics.get(ch);
      // An announcement from an older writer ('1') is a status change.
      if (topic) wake(topic, ANNOUNCEMENTS.includes(message) ? (message as Announcement) : 'status');
    });
    // Messages published while the connection was down are lost; the subscriptions are renewed on reconnect.
    let connectedBefore = false;
    sub.on('ready', () => {
      if (connectedBefore) for (const topic of topics.values()) wake(topic, 'recheck');
      connectedBefore = true;
    });
    // A failed subscription only leaves watchers to the recheck; its error must not end the process.
    sub.on('error', () => undefined);
    return sub;
  }

  function subscribe(ch: string, topic: Topic, retried = false): Promise<boolean> {
    return connect()
      .subscribe(ch)
      .then(
        () => {
          topic.live = true;
          // Whatever changed while it was missing was announced to nobody here.
          if (retried) wake(topic, 'recheck');
          return true;
        },
        (err: unknown) => {
          topic.live = false;
          deps.log?.warn({ err, channel: ch }, 'status feed subscription failed; trying again');
          setTimeout(() => {
            if (topics.get(ch) === topic) topic.subscribed = subscribe(ch, topic, true);
          }, RESUBSCRIBE_MS).unref();
          return false;
        },
      );
  }

  function join(ch: string): Topic {
    const existing = topics.get(ch);
    if (existing) return existing;
    const topic: Topic = {
      listeners: new Set(),
      subscribed: Promise.resolve(false),
      live: false,
      generation: 0,
      reads: new Map(),
      timer: setInterval(() => wake(topic, 'recheck'), recheckMs),
    };
    topic.subscribed = subscribe(ch, topic);
    topic.timer.unref();
    topics.set(ch, topic);
    return topic;
  }

  function leave(ch: string, topic: Topic) {
    if (topic.listeners.size > 0 || topics.get(ch) !== topic) return;
    topics.delete(ch);
    clearInterval(topic.timer);
    const sub = subscriber;
    // Sent after the SUBSCRIBE on the same connection, so Redis applies them in order even if it is unconfirmed.
    if (sub) void sub.unsubscribe(ch).catch(ignore('a connection that failed holds no subscription to end'));
  }

  return {
    /** Called after the change is written, never before: a woken watcher must find it when it reads. */
    async publish(deploymentId: string, what: Announcement = 'status'): Promise<void> {
      await deps.redis.publish(channel(deploymentId), what);
    },

    /**
     * Resolves once this process's subscription to the deployment is confirmed by Redis (it may be shared and still
     * pending: every watcher waits for it), so a read made after this sees every change not announced to it.
     * `on`: the announcements that wake this watcher (all by default); rechecks always do.
     */
    async watch(deploymentId: string, opts: { on?: readonly Announcement[] } = {}) {
      const ch = channel(deploymentId);
      const topic = join(ch);
      let pending = false;
      let resolveWait: (() => void) | undefined;
      const listener = (what: Wake) => {
        if (what !== 'recheck' && opts.on && !opts.on.includes(what)) return;
        pending = true;
        resolveWait?.();
      };
      topic.listeners.add(listener);
      await topic.subscribed;
      return {
        /**
         * Resolves once woken since the last call (at once if that already happened), when `signal` aborts, or
         * after `maxMs`, whichever comes first.
         */
        async changed(maxMs = Infinity, signal?: AbortSignal): Promise<void> {
          if (pending || signal?.aborted) {
            pending = false;
            return;
          }
          await new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(timer);
              signal?.removeEventListener('abort', done);
              resolveWait = undefined;
              pending = false;
              resolve();
            };
            const timer = Number.isFinite(maxMs) ? setTimeout(done, Math.max(0, maxMs)) : undefined;
            signal?.addEventListener('abort', done, { once: true });
            resolveWait = done;
          });
        },

        /**
         * `fetch()` once for all this deployment's watchers until the next wake: the first to ask reads, the
         * others get its answer. Sound because a change written after that read was started is announced later,
         * and wakes every watcher into a read of the next generation. A failure is not kept.
         */
        read<T>(key: string, fetch: () => Promise<T>): Promise<T> {
          if (!topic.live) return fetch();
          const kept = topic.reads.get(key) as Promise<T> | undefined;
          if (kept) return kept;
          const generation = topic.generation;
          const reading: Promise<T> = fetch().catch((err: unknown) => {
            if (topic.generation === generation && topic.reads.get(key) === reading) topic.reads.delete(key);
            throw err;
          });
          topic.reads.set(key, reading);
          return reading;
        },

        close(): void {
          topic.listeners.delete(listener);
          resolveWait?.();
          leave(ch, topic);
        },
      };
    },
  };
}

export type StatusFeed = ReturnType<typeof createStatusFeed>;
export type StatusWatch = Awaited<ReturnType<StatusFeed['watch']>>;

const LOST_ANNOUNCEMENT = 'watchers recheck on their own';

/**
 * The store as the worker uses it: each status change written, then put in the status read model, then announced.
 * The model comes first so that a reader woken by the announcement finds the change there; it is refreshed on a
 * retry that wrote nothing too (the write may have landed and its refresh not), and its failure fails the write, so
 * the activity is retried. A failed announcement is ignored: watchers recheck on their own (above), so it costs them
 * latency, never the write.
 */
export function announcingStatus<S extends { recordStatus(change: { deploymentId: string }): Promise<unknown> }>(
  store: S,
  feed: Pick<StatusFeed, 'publish'> | undefined,
  model: Pick<StatusModel, 'refresh'> | undefined,
): S {
  if (!feed && !model) return store;
  const recordStatus: S['recordStatus'] = async (change) => {
    const written = await store.recordStatus(change);
    await model?.refresh(change.deploymentId);
    await feed?.publish(change.deploymentId, 'status').catch(ignore(LOST_ANNOUNCEMENT));
    return written;
  };
  return Object.assign(Object.create(store) as S, store, { recordStatus });
}

/** The log store as the worker uses it: each batch of build and system lines announced once written. */
export function announcingLogs<S extends Pick<LogStore, 'append'>>(
  logs: S,
  feed: Pick<StatusFeed, 'publish'> | undefined,
): S {
  if (!feed) return logs;
  const append: LogStore['append'] = async (deploymentId, stream, messages) => {
    await logs.append(deploymentId, stream, messages);
    if (messages.length > 0) await feed.publish(deploymentId, 'log').catch(ignore(LOST_ANNOUNCEMENT));
  };
  return Object.assign(Object.create(logs) as S, logs, { append });
}

/**
 * The reconciler's store: a destroy it finishes (the api stopped half way) is buried in the status read model and
 * announced like the api's own.
 */
export function announcingDestroys<S extends { finishDestroyIntents(since: Date): Promise<string[]> }>(
  store: S,
  feed: Pick<StatusFeed, 'publish'> | undefined,
  model: Pick<StatusModel, 'bury'> | undefined,
): S {
  if (!feed && !model) return store;
  const finishDestroyIntents = async (since: Date) => {
    const hidden = await store.finishDestroyIntents(since);
    for (const id of hidden) {
      await model?.bury(id);
      await feed?.publish(id, 'destroyed').catch(ignore(LOST_ANNOUNCEMENT));
    }
    return hidden;
  };
  return Object.assign(Object.create(store) as S, store, { finishDestroyIntents });
}
