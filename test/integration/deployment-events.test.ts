import { createParser, type EventSourceMessage } from 'eventsource-parser';

import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';

type Body = Record<string, unknown> & { status?: string; message?: string };

describe('GET /platform/deployments/{id}/events: a deployment followed as Server-Sent Events', () => {
  let h: Harness;
  let slow: string;

  beforeAll(async () => {
    h = await startHarness('deployment-events');
    slow = await buildFixtureImage(h.docker, 'slow-hello');
  });
  afterAll(() => h?.stop());

  /**
   * Reads the stream as an EventSource would, until it ends or `until` holds for the events so far; `afterFirst`
   * runs once the first event is in (the stream is then following).
   */
  async function follow(
    token: string,
    id: string,
    lastEventId?: string,
    until: (events: EventSourceMessage[]) => boolean = () => false,
    afterFirst?: () => Promise<void>,
  ) {
    const res = await fetch(`${h.baseUrl}/platform/deployments/${id}/events`, {
      headers: { authorization: `Bearer ${token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });
    const events: EventSourceMessage[] = [];
    if (res.status !== 200) return { status: res.status, body: (await res.json()) as Body, events, ended: true };
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const parser = createParser({ onEvent: (e) => events.push(e) });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let ended = false;
    while (!until(events)) {
      const { done, value } = await reader.read();
      if (done) {
        ended = true;
        break;
      }
      const before = events.length;
      parser.feed(value);
      if (before === 0 && events.length > 0) await afterFirst?.();
    }
    await reader.cancel();
    return { status: res.status, body: {}, events, ended };
  }

  const settled = (events: EventSourceMessage[]) => events.some((e) => e.event === 'settled');
  /** What is not the app's own output: its lines (the probes' access log) come whenever the engine has them. */
  const ours = (events: EventSourceMessage[]) =>
    events.filter((e) => !(e.event === 'log' && (JSON.parse(e.data) as Body).instance !== undefined));

  it('streams the status changes in order with resumable IDs, says when the deployment settled, and stays open', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const r = await api.post<Body>('/compat/deploy', { image: slow, name: 'followed', port: 8080 });
    const id = String(r.body.deploymentId);

    const all = await follow(org.token, id, undefined, settled);
    expect(all.status).toBe(200);
    expect(all.ended).toBe(false);
    const statuses = all.events.filter((e) => e.event === 'status').map((e) => (JSON.parse(e.data) as Body).status);
    expect(statuses[0]).toBe('queued');
    expect(statuses.at(-1)).toBe('running');
    expect(all.events.at(-1)).toMatchObject({ event: 'settled', data: JSON.stringify({ status: 'running' }) });
    expect(all.events.every((e) => typeof e.id === 'string' && e.id.length > 0)).toBe(true);
    // The record's own history is what was streamed.
    const record = (await api.get<{ events: Body[] }>(`/compat/deployments/${id}`)).body;
    expect(statuses).toEqual(record.events.map((e) => e.status));

    // Resuming after the first event gives exactly the rest, no repeat and no gap.
    const rest = await follow(org.token, id, all.events[0]!.id, settled);
    expect(ours(rest.events).map((e) => [e.event, e.data])).toEqual(
      ours(all.events.slice(1)).map((e) => [e.event, e.data]),
    );
    // Resuming before `settled` gives it again; an ID of the older three-part form is still a place to resume from.
    const before = ours(all.events).at(-2)!;
    const after = await follow(org.token, id, before.id, settled);
    expect(ours(after.events).map((e) => e.event)).toEqual(['settled']);
    const old = before.id!.split('.').slice(0, 3).join('.');
    const fromOld = await follow(org.token, id, old, settled);
    expect(fromOld.status).toBe(200);
    expect(ours(fromOld.events).at(-1)!.event).toBe('settled');
    await api.destroyAndWait(id);
  });

  it('tells a follower that the deployment was destroyed, then closes', async () => {
    const org = await h.newOrg();
    const api = client(h, org.token);
    const id = String(
      (await api.post<Body>('/compat/deploy', { image: slow, name: 'gone', port: 8080 })).body.deploymentId,
    );
    // Destroyed once the stream is following (it has sent the history it read): never before its own 404 check.
    let destroyed = 0;
    const { events, ended } = await follow(org.token, id, undefined, undefined, async () => {
      destroyed = (await api.del(`/compat/deployments/${id}`)).status;
    });
    expect(destroyed).toBe(204);
    // The destroy may overtake the start, or come after the app answered: the stream ends with it either way.
    expect(ended).toBe(true);
    expect(events.slice(-2).map((e) => e.event)).toEqual(['destroyed', 'end']);
    expect(JSON.parse(events.at(-1)!.data)).toEqual({ reason: 'destroyed' });
  });

  it('answers another organisation’s deployment with 404 and a foreign Last-Event-ID with 400, in the platform shape', async () => {
    const owner = await h.newOrg();
    const id = String(
      (await client(h, owner.token).post<Body>('/compat/deploy', { image: slow, name: 'mine', port: 8080 })).body
        .deploymentId,
    );
    const stranger = await h.newOrg();
    const foreign = await follow(stranger.token, id);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ status: 'error', message: expect.any(String) });
    const bad = await follow(owner.token, id, 'not-a-cursor');
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/Last-Event-ID/);
    await client(h, owner.token).destroyAndWait(id);
  });
});
