import { randomUUID } from 'node:crypto';

import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { CommandStartedEvent } from 'mongodb';

import { START } from '@api/features/deployments/event-cursor';
import { createDeploymentFollower, type FollowEvent } from '@api/features/deployments/events';
import { createLogStore } from '@shared/deployments/logs-store';
import { createStatusModel } from '@shared/deployments/read-model';
import { announcingLogs, announcingStatus, createStatusFeed } from '@shared/deployments/status-feed';
import { createDeploymentStore } from '@shared/deployments/store';
import { AppError } from '@shared/errors';
import type { Principal } from '@shared/identity/service';
import { createLogger } from '@shared/logger';
import { createRedis, type Redis } from '@shared/redis';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { startSecondApi } from '../helpers/second-api';

type Body = Record<string, unknown> & { status?: string; deploymentId?: string };

/**
 * Followers of a deployment — event streams and `?wait=` reads — read only when something happened, and a destroy
 * is never missed, whenever it comes. No worker runs here: a deployment stays queued, nothing announces anything
 * unless the test does, so what wakes a follower (and what it costs while idle) is exactly what the test made.
 */
describe('Deployment followers: woken by announcements, free while idle, never missing a destroy', () => {
  let h: Harness;
  /** A second api over the same services whose database reads are counted. */
  let base: string;
  let second: Awaited<ReturnType<typeof startSecondApi>>;
  const reads: CommandStartedEvent[] = [];
  /** The api's warnings: why a stream failed, when one does. */
  const apiLog: string[] = [];

  beforeAll(async () => {
    h = await startHarness(
      'deployment-followers',
      // 100 streams and the deploys and waits beside them, from one token.
      { RATE_LIMIT_PLATFORM_PER_15MIN: '1000', RATE_LIMIT_COMPAT_READS_PER_MIN: '1000' },
      { worker: false },
    );
    second = await startSecondApi(h, {
      log: createLogger('test', 'warn', { write: (line: string) => void apiLog.push(line) }),
      onCommand: (e) => {
        const command = e.command as Record<string, unknown>;
        const collection = e.commandName === 'getMore' ? command.collection : command[e.commandName];
        const isRead = ['find', 'aggregate', 'count', 'getMore'].includes(e.commandName);
        if (isRead && ['deployments', 'deployment_logs'].includes(String(collection))) reads.push(e);
      },
    });
    base = second.baseUrl;
  });
  afterAll(async () => {
    await second?.stop();
    await h?.stop();
  });

  const channel = (id: string) => `${h.config.REDIS_KEY_PREFIX}deployment-status:${id}`;
  const subscribers = async (id: string) => Number(((await h.redis.pubsub('NUMSUB', channel(id))) as unknown[])[1]);

  async function setUp(deployments: number) {
    const org = await h.newOrg();
    const api = client({ ...h, baseUrl: base }, org.token);
    const ids: string[] = [];
    for (let i = 0; i < deployments; i++) {
      const r = await api.post<Body>('/compat/deploy', { image: 'busybox:latest', name: `idle-${i}`, port: 8080 });
      expect(r.status).toBe(202);
      ids.push(String(r.body.deploymentId));
    }
    return { org, api, ids, principal: await h.identity.authenticate(org.token) };
  }

  /**
   * An open event stream, read as an EventSource would, in the background; `next(type)` waits for the next event of
   * that type, `ended` tells whether the server ended it.
   */
  async function open(token: string, id: string) {
    const res = await fetch(`${base}/platform/deployments/${id}/events`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(200);
    const events: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (e) => events.push(e) });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const woken = new Set<() => void>();
    const wake = () => woken.forEach((w) => w());
    let ended = false;
    void (async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read()) {
        parser.feed(r.value);
        wake();
      }
    })()
      // Cancelled by the test itself.
      .catch(() => undefined)
      .finally(() => {
        ended = true;
        wake();
      });
    return {
      events,
      get ended() {
        return ended;
      },
      async next(type: string): Promise<EventSourceMessage> {
        for (;;) {
          const found = events.find((e) => e.event === type);
          if (found) return found;
          if (ended) throw new Error(`the stream ended without a ${type} event: ${JSON.stringify(events)}`);
          await new Promise<void>((resolve) => {
            const w = () => {
              woken.delete(w);
              resolve();
            };
            woken.add(w);
          });
        }
      },
      close: () => reader.cancel(),
    };
  }

  /** Fails with `what` if `p` has not settled in `ms`: a follower no announcement woke would otherwise hang. */
  async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(what)), ms);
    });
    try {
      return await Promise.race([p, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The deployment as the service reads it: the organisation's, and not destroyed. */
  async function read(principal: Principal, id: string) {
    const record = await createDeploymentStore(h.db).get(principal.org._id, id);
    if (!record) throw new AppError('DEPLOYMENT_NOT_FOUND', `No deployment ${id} in this organisation.`);
    return record;
  }

  /**
   * A follower as the events route builds it, over the real stores and a real feed whose recheck never comes
   * within the test: only its reads and the announcements can end it.
   */
  const follower = (get: typeof read) =>
    createDeploymentFollower({
      feed: createStatusFeed({ redis: h.redis, keyPrefix: h.config.REDIS_KEY_PREFIX, recheckMs: 3_600_000 }),
      logs: createLogStore(h.db),
      get,
    });

  async function collect(events: AsyncGenerator<FollowEvent>): Promise<FollowEvent[]> {
    const all: FollowEvent[] = [];
    for await (const e of events) all.push(e);
    return all;
  }

  it('ends a stream with `destroyed` when the destroy came between its 404 check and its first read', async () => {
    const { api, ids, principal } = await setUp(1);
    const id = ids[0]!;
    let first = true;
    // The route's own 404 check has passed; the destroy lands before the follower's first read.
    const follow = follower(async (principal, id) => {
      if (first) {
        first = false;
        expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
      }
      return read(principal, id);
    });
    const events = await within(
      collect(follow(principal, id, START, new AbortController().signal)),
      30_000,
      'the follower never ended after the destroy',
    );
    expect(events.map((e) => e.type)).toEqual(['destroyed', 'end']);
  });

  it('wakes a stream whose first read was answered before a destroy announced while it was on its way', async () => {
    const { api, ids, principal } = await setUp(1);
    const id = ids[0]!;
    let first = true;
    // The first read's answer is the record before the destroy; the destroy's announcement comes meanwhile.
    const follow = follower(async (principal, id) => {
      const record = await read(principal, id);
      if (first) {
        first = false;
        expect((await api.del(`/compat/deployments/${id}`)).status).toBe(204);
      }
      return record;
    });
    const events = await within(
      collect(follow(principal, id, START, new AbortController().signal)),
      30_000,
      'the follower missed the destroy announced between its subscription and its first read',
    );
    expect(events.map((e) => e.type)).toEqual(['status', 'destroyed', 'end']);
  });

  it('tells each status change after the lines written before it, though one read finds them all', async () => {
    const { ids, principal } = await setUp(1);
    const id = ids[0]!;
    // Written with no announcement, so the follower's first read finds the whole build and both changes at once.
    const store = createDeploymentStore(h.db);
    const logs = createLogStore(h.db);
    await store.recordStatus({ deploymentId: id, version: 10, status: 'building', message: 'building' });
    for (let i = 1; i <= 150; i += 50)
      await logs.append(
        id,
        'build',
        Array.from({ length: 50 }, (_, k) => `build line ${String(i + k).padStart(3, '0')}`),
      );
    await store.recordStatus({ deploymentId: id, version: 11, status: 'deploying', message: 'starting' });
    await logs.append(id, 'system', ['instance started']);
    await store.recordStatus({ deploymentId: id, version: 12, status: 'running', message: 'serving' });

    const stop = new AbortController();
    const told: string[] = [];
    for await (const e of follower(read)(principal, id, START, stop.signal)) {
      if (e.type === 'settled') break;
      told.push(e.type === 'status' ? e.data.status : e.type === 'log' ? e.data.message : e.type);
    }
    stop.abort();
    const lines = Array.from({ length: 150 }, (_, i) => `build line ${String(i + 1).padStart(3, '0')}`);
    expect(told).toEqual(['queued', 'building', ...lines, 'deploying', 'instance started', 'running']);
  });

  it('holds 100 streams and 20 waits on one token with no database read while idle and one subscription per deployment', async () => {
    const { org, api, ids } = await setUp(4);
    apiLog.length = 0;
    const streams = await Promise.all(Array.from({ length: 100 }, (_, i) => open(org.token, ids[i % ids.length]!)));
    await Promise.all(streams.map((s) => s.next('status')));
    const waits = Array.from({ length: 20 }, () =>
      api.get<Body>(`/compat/deployments/${ids[3]}?wait=running&timeout=60`),
    );
    // Every stream has sent its history; the waits make their first reads whenever a loaded machine gets to them, so
    // the idle window starts after a second with no read at all (bounded: polling followers are never quiet).
    for (let i = 0, seen = -1; i < 30 && reads.length !== seen; i++) {
      seen = reads.length;
      await new Promise((r) => setTimeout(r, 1_000));
    }
    reads.length = 0;
    await new Promise((r) => setTimeout(r, 4_000));
    // Every stream is still open (the server's account of any that failed comes with it).
    expect({ ended: streams.filter((s) => s.ended).length, failures: apiLog }).toEqual({ ended: 0, failures: [] });
    // At most one shared recheck per deployment may fall in the window (two reads: its record and its log).
    expect(reads.length).toBeLessThanOrEqual(2 * ids.length);
    expect(await Promise.all(ids.map(subscribers))).toEqual([1, 1, 1, 1]);

    // A status change the worker writes and announces: that deployment's 25 streams and 20 waits share its reads.
    const feed = createStatusFeed({ redis: h.redis, keyPrefix: h.config.REDIS_KEY_PREFIX });
    const written = createDeploymentStore(h.db);
    const model = createStatusModel({ redis: h.redis, keyPrefix: h.config.REDIS_KEY_PREFIX, store: written });
    const store = announcingStatus(written, feed, model);
    const logs = announcingLogs(createLogStore(h.db), feed);
    reads.length = 0;
    await logs.append(ids[3]!, 'system', ['pulling busybox:latest']);
    await store.recordStatus({ deploymentId: ids[3]!, version: 50, status: 'running', message: 'serving' });
    const ofFourth = streams.filter((_, i) => i % ids.length === 3);
    await Promise.all(ofFourth.map((s) => s.next('settled')));
    const answered = await Promise.all(waits);
    const woken = reads.filter((e) => e.command.find === 'deployments').length;

    // Closed by their clients, the streams let go of their subscriptions.
    await Promise.all(streams.map((s) => s.close()));
    for (let i = 0; (await Promise.all(ids.map(subscribers))).some((n) => n > 0) && i < 100; i++)
      await new Promise((r) => setTimeout(r, 100));

    expect(ofFourth.every((s) => s.events.some((e) => e.event === 'log' && e.data.includes('pulling')))).toBe(true);
    expect(answered.map((r) => [r.status, r.body.status])).toEqual(answered.map(() => [200, 'running']));
    // One shared read per wake (the log line's, the status's), not one per stream or wait; a recheck may add one.
    expect(woken).toBeGreaterThanOrEqual(1);
    expect(woken).toBeLessThanOrEqual(3);
    expect(await Promise.all(ids.map(subscribers))).toEqual([0, 0, 0, 0]);
  });

  it('confirms a subscription asked for while its connection is still in its handshake', async () => {
    // The feed's own Redis connection, whose subscriber connection (its duplicate) the test sees being made.
    const own = createRedis(h.config.REDIS_URL);
    const duplicate = own.duplicate.bind(own);
    let subscriber: Redis | undefined;
    own.duplicate = (override) => (subscriber = duplicate(override));
    const warnings: unknown[] = [];
    const feed = createStatusFeed({
      redis: own,
      keyPrefix: h.config.REDIS_KEY_PREFIX,
      log: { warn: (fields: unknown) => void warnings.push(fields) },
    });
    try {
      const [early, late] = [`handshake-${randomUUID()}`, `handshake-${randomUUID()}`];
      const first = feed.watch(early);
      // Connected, not yet ready: a SUBSCRIBE now is sent at once, before the connection's own checks.
      const second = new Promise<Awaited<ReturnType<typeof feed.watch>>>((resolve, reject) =>
        subscriber!.once('connect', () => feed.watch(late).then(resolve, reject)),
      );
      const watches = await within(Promise.all([first, second]), 10_000, 'the subscriptions were never confirmed');
      expect(warnings).toEqual([]);
      expect(await Promise.all([early, late].map(subscribers))).toEqual([1, 1]);
      for (const w of watches) w.close();
    } finally {
      // A connection that failed its checks keeps trying again; it goes with the test either way.
      subscriber?.disconnect();
      await own.quit();
    }
  });

  it('tells idle streams and waits of a destroy at once, each deployment’s followers sharing one read', async () => {
    const { org, api, ids } = await setUp(2);
    const streams = await Promise.all(Array.from({ length: 10 }, (_, i) => open(org.token, ids[i % 2]!)));
    await Promise.all(streams.map((s) => s.next('status')));
    const waiting = api.get<Body>(`/compat/deployments/${ids[0]}?wait=running&timeout=60`);
    await new Promise((r) => setTimeout(r, 500));
    reads.length = 0;
    // Through the other api process: the announcement crosses processes by Redis.
    expect((await client(h, org.token).del(`/compat/deployments/${ids[0]}`)).status).toBe(204);
    const gone = streams.filter((_, i) => i % 2 === 0);
    await within(
      Promise.all(gone.map((s) => s.next('destroyed'))),
      30_000,
      'a stream missed the destroy another api process announced',
    );
    expect((await waiting).status).toBe(404);
    // One shared read of the record for the five streams and the wait, and the wait's own 404; a recheck may add one.
    expect(reads.filter((e) => e.command.find === 'deployments').length).toBeLessThanOrEqual(3);
    // The other deployment's streams are still open and were not woken.
    expect(streams.filter((_, i) => i % 2 === 1).every((s) => s.events.every((e) => e.event === 'status'))).toBe(true);
    await Promise.all(streams.map((s) => s.close()));
  });
});
