import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { type AttemptInput, createAttemptActivities, type SendResult } from '@activities/webhook-delivery/attempts';
import { connectMongo, type Database } from '@shared/db/mongo';
import type { LookupAll } from '@shared/net-guard';
import { createSalesStore, type SalesStore } from '@shared/sales/store';

/**
 * The delivery activity's real connection path (undici, real sockets, real FerretDB) against receivers on
 * loopback. DNS is the one thing injected: a resolver answering differently on each call is a rebinding name.
 */
describe('webhook delivery connects where the guard looked, and reads a bounded answer', () => {
  let database: Database;
  let store: SalesStore;
  const servers: http.Server[] = [];
  beforeAll(async () => {
    database = await connectMongo(process.env.MONGODB_URL!, 'slipway_test');
    store = createSalesStore(database.db);
  });
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    await database?.close();
  });

  /** A receiver on `host`:`port` (0 = any) that records who it was and answers as `handle` says. */
  async function receiver(host: string, port: number, handle: (res: http.ServerResponse) => void) {
    const hits: { host: string | undefined }[] = [];
    /** Each connection the receiver accepted, by the client's port. */
    const connections = new Set<number>();
    const server = http.createServer((req, res) => {
      hits.push({ host: req.headers.host });
      connections.add(req.socket.remotePort!);
      req.resume();
      handle(res);
    });
    await new Promise<void>((resolve) => server.listen(port, host, resolve));
    servers.push(server);
    return { hits, connections, port: (server.address() as AddressInfo).port, server };
  }

  /** A seller whose endpoint is `url`, and one pending event to deliver to it. */
  async function eventFor(url: string) {
    const orgId = `org-${randomUUID()}`;
    await store.setWebhook(orgId, { url, secrets: [{ value: 'whsec_test', createdAt: new Date() }] });
    const eventId = randomUUID();
    await store.insertEvent({
      _id: eventId,
      orgId,
      type: 'test',
      body: '{"id":"x"}',
      createdAt: new Date(),
      status: 'pending',
      attempts: [],
    });
    return eventId;
  }

  const attempt = (eventId: string): AttemptInput => ({
    eventId,
    trigger: 'manual',
    nextAttemptAt: null,
    final: false,
    scheduledAt: new Date().toISOString(),
    key: `k-${randomUUID()}`,
  });
  const sent = (r: SendResult) => {
    if (r.kind !== 'sent') throw new Error(`expected an attempt, got ${JSON.stringify(r)}`);
    return r;
  };

  it('a name that answers 127.0.0.1 to the check and 127.0.0.2 afterwards reaches 127.0.0.1 only', async () => {
    const checked = await receiver('127.0.0.1', 0, (res) => res.end('checked'));
    const rebound = await receiver('127.0.0.2', checked.port, (res) => res.end('rebound'));
    let lookups = 0;
    const rebinding: LookupAll = async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    // Private targets are allowed here only so that the checked address can be a receiver we run ourselves.
    const { sendAttempt } = createAttemptActivities({ store, allowPrivateTargets: true, lookup: rebinding });

    const eventId = await eventFor(`http://rebind.test:${checked.port}/hook`);
    const r = sent(await sendAttempt(attempt(eventId)));

    expect(r.outcome).toBe('delivered');
    expect(r.attempt.responseBody).toBe('checked');
    expect(checked.hits).toEqual([{ host: `rebind.test:${checked.port}` }]);
    expect(rebound.hits).toHaveLength(0);
    expect(lookups).toBe(1);
  });

  it('sends attempts to one receiver over one kept-alive connection', async () => {
    const one = await receiver('127.0.0.1', 0, (res) => res.end('ok'));
    const { deliverAttempt } = createAttemptActivities({ store, allowPrivateTargets: true });
    for (let i = 0; i < 5; i++) {
      const r = await deliverAttempt(attempt(await eventFor(`http://127.0.0.1:${one.port}/hook`)));
      expect(r).toMatchObject({ kind: 'done', result: { outcome: 'delivered' } });
    }
    expect(one.hits).toHaveLength(5);
    expect(one.connections.size).toBe(1);
  });

  it('keeps no connection to an address the name no longer resolves to: each attempt goes where its check looked', async () => {
    const first = await receiver('127.0.0.1', 0, (res) => res.end('first'));
    const second = await receiver('127.0.0.2', first.port, (res) => res.end('second'));
    let lookups = 0;
    // Each attempt checks the name again: it answers 127.0.0.1 first, then 127.0.0.2.
    const moving: LookupAll = async () => [{ address: lookups++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
    const { sendAttempt } = createAttemptActivities({ store, allowPrivateTargets: true, lookup: moving });
    const url = `http://moving.test:${first.port}/hook`;
    expect(sent(await sendAttempt(attempt(await eventFor(url)))).attempt.responseBody).toBe('first');
    expect(sent(await sendAttempt(attempt(await eventFor(url)))).attempt.responseBody).toBe('second');
    expect([first.hits.length, second.hits.length]).toEqual([1, 1]);
  });

  it('records the attempt with the send, and its event status: the log lists it as the receiver saw it', async () => {
    const ok = await receiver('127.0.0.1', 0, (res) => res.end('thanks'));
    const { deliverAttempt } = createAttemptActivities({ store, allowPrivateTargets: true });
    const eventId = await eventFor(`http://127.0.0.1:${ok.port}/hook`);
    const input = attempt(eventId);
    expect(await deliverAttempt(input)).toEqual({
      kind: 'done',
      result: { outcome: 'delivered', number: 1, responseStatus: 200, errorClass: null },
    });
    // Run again (a retried local activity): found by its key, not sent twice.
    expect(await deliverAttempt(input)).toMatchObject({ kind: 'done', result: { number: 1 } });
    expect(ok.hits).toHaveLength(1);
    const event = await store.getEventAny(eventId);
    expect(event).toMatchObject({
      status: 'delivered',
      attempts: [{ number: 1, key: input.key, responseBody: 'thanks' }],
    });
  });

  it('sets the status on a retried record whose first try stored the attempt but not the status', async () => {
    const ok = await receiver('127.0.0.1', 0, (res) => res.end('ok'));
    const eventId = await eventFor(`http://127.0.0.1:${ok.port}/hook`);
    const { sendAttempt, recordAttempt } = createAttemptActivities({ store, allowPrivateTargets: true });
    const { kind: _kind, ...toRecord } = sent(await sendAttempt(attempt(eventId)));
    // The first try of the record: the attempt written, then MongoDB gone before the status.
    const a = toRecord.attempt;
    await store.recordAttempt((await store.getEventAny(eventId))!, {
      ...a,
      scheduledAt: new Date(a.scheduledAt),
      at: new Date(a.at),
      nextAttemptAt: null,
    });
    expect(await store.getEventAny(eventId)).toMatchObject({ status: 'pending' });
    await recordAttempt(toRecord);
    expect(await store.getEventAny(eventId)).toMatchObject({ status: 'delivered', attempts: [{ number: 1 }] });
  });

  it('refuses a name when one of its addresses is private, and sends nothing', async () => {
    const inside = await receiver('127.0.0.1', 0, (res) => res.end('inside'));
    const split: LookupAll = async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
    const { sendAttempt } = createAttemptActivities({ store, allowPrivateTargets: false, lookup: split });
    const r = sent(await sendAttempt(attempt(await eventFor(`http://split.test:${inside.port}/hook`))));
    expect(r.attempt).toMatchObject({
      errorClass: 'blocked',
      error: expect.stringMatching(/127\.0\.0\.1, a loopback/),
    });
    expect(inside.hits).toHaveLength(0);
  });

  it('keeps metadata closed where private targets are allowed: a name that also answers 169.254.169.254 gets nothing', async () => {
    const inside = await receiver('127.0.0.1', 0, (res) => res.end('inside'));
    const withMetadata: LookupAll = async () => [
      { address: '127.0.0.1', family: 4 },
      { address: '169.254.169.254', family: 4 },
    ];
    const { sendAttempt } = createAttemptActivities({ store, allowPrivateTargets: true, lookup: withMetadata });
    const r = sent(await sendAttempt(attempt(await eventFor(`http://meta.test:${inside.port}/hook`))));
    expect(r.attempt).toMatchObject({ errorClass: 'blocked', error: expect.stringMatching(/169\.254\.169\.254/) });
    expect(inside.hits).toHaveLength(0);
    const direct = createAttemptActivities({ store, allowPrivateTargets: true });
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00:ec2::254]/',
      'http://100.100.100.200/',
    ]) {
      const refused = sent(await direct.sendAttempt(attempt(await eventFor(url))));
      expect([url, refused.attempt.errorClass]).toEqual([url, 'blocked']);
    }
  });

  it('refuses the IPv4-compatible and documentation spellings of an address', async () => {
    const { sendAttempt } = createAttemptActivities({ store, allowPrivateTargets: false });
    for (const url of ['http://[::127.0.0.1]:9/hook', 'http://203.0.113.7/hook', 'http://[::ffff:7f00:1]:9/hook']) {
      const r = sent(await sendAttempt(attempt(await eventFor(url))));
      expect(r.attempt.errorClass).toBe('blocked');
    }
  });

  it('stops reading an endless answer after 4 KB and keeps the attempt delivered', async () => {
    let closed = false;
    const endless = await receiver('127.0.0.1', 0, (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(1024);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      res.on('close', () => (closed = true));
      pump();
    });
    const { sendAttempt } = createAttemptActivities({ store, allowPrivateTargets: true });
    const r = sent(await sendAttempt(attempt(await eventFor(`http://127.0.0.1:${endless.port}/hook`))));
    expect(r.outcome).toBe('delivered');
    expect(r.attempt.responseBody).toHaveLength(4096);
    // The activity hung up rather than draining the stream.
    await new Promise((resolve) => setImmediate(resolve));
    await expect(waitFor(() => closed)).resolves.toBe(true);
  });

  it('keeps what arrived of an answer that trickles past the deadline, judged by its status', async () => {
    const trickle = await receiver('127.0.0.1', 0, (res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first bytes;');
      // Then nothing more, ever: the read must stop at the deadline, not wait for an end.
    });
    const { sendAttempt } = createAttemptActivities({ store, allowPrivateTargets: true });
    const r = sent(await sendAttempt(attempt(await eventFor(`http://127.0.0.1:${trickle.port}/hook`))));
    expect(r.outcome).toBe('delivered');
    expect(r.attempt.responseBody).toBe('first bytes;');
  });
});

/** Polls a condition a few times; resolves with its last value (no timing asserted). */
async function waitFor(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  return check();
}
