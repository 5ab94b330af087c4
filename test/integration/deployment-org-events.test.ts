import { randomUUID } from 'node:crypto';

import { createParser, type EventSourceMessage } from 'eventsource-parser';

import { PERMISSIONS } from '@shared/permissions';

import { client } from '../helpers/client';
import { eventually, type Harness, startHarness } from '../helpers/harness';

type Body = Record<string, unknown>;
interface StatusData {
  deploymentId: string;
  status: string;
  message: string;
  at: string;
}

/**
 * GET /platform/deployment-events: one stream per caller for every deployment it may see, on the real stack (the
 * worker writes and announces each status). A tenant never hears of another organisation's deployments, nor of a
 * project it is not a member of.
 */
describe('GET /platform/deployment-events: the organisation-wide status stream', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness('org-events', { RATE_LIMIT_PLATFORM_PER_15MIN: '100000', EVENTS_HEARTBEAT_MS: '500' });
  });
  afterAll(() => h?.stop());

  /** Opens the stream with `token` and collects its events in the background until `close()`. */
  async function open(token: string) {
    const abort = new AbortController();
    const res = await fetch(`${h.baseUrl}/platform/deployment-events`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events: EventSourceMessage[] = [];
    let raw = '';
    const parser = createParser({ onEvent: (e) => events.push(e) });
    const reading = (async () => {
      const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        raw += value;
        parser.feed(value);
      }
    })().catch(() => undefined);
    await eventually(async () => (events.some((e) => e.event === 'ready') ? true : undefined), 'the ready event');
    return {
      events,
      raw: () => raw,
      statuses: () => events.filter((e) => e.event === 'status').map((e) => JSON.parse(e.data) as StatusData),
      ids: () =>
        new Set(events.filter((e) => e.event !== 'ready').map((e) => (JSON.parse(e.data) as StatusData).deploymentId)),
      close: async () => {
        abort.abort();
        await reading;
      },
    };
  }

  it("delivers the caller's deployments' status changes, never another organisation's or an unseen project's", async () => {
    const a = await h.newOrg('pro');
    const b = await h.newOrg('pro');
    const apiA = client(h, a.token);
    const apiB = client(h, b.token);
    const projectId = (
      (await apiA.post<{ data: Body }>('/platform/projects', { name: `p-${randomUUID().slice(0, 6)}` })).body
        .data as Body
    ).id as string;
    // A developer of org A who is a member of no project: it sees A's deployments of no project only.
    const dev = await apiA.post<{ data: Body }>('/platform/users', {
      email: `dev-${randomUUID().slice(0, 8)}@example.test`,
      role: 'developer',
    });
    expect(dev.status).toBe(200);
    const devToken = (
      await h.identity.createToken({
        orgId: a.orgId,
        userId: dev.body.data.id as string,
        name: 'dev',
        scopes: [...PERMISSIONS],
      })
    ).token;

    const streamA = await open(a.token);
    const streamDev = await open(devToken);
    const streamB = await open(b.token);
    try {
      // An image nobody can pull: the deployment goes queued → … → failed, each change announced by the worker.
      const deploy = async (api: typeof apiA, body: Body) => {
        const r = await api.post<{ data: { deployment: { id: string } } }>('/platform/deployments', {
          image: `slipway-test/none-${randomUUID().slice(0, 6)}:1`,
          ...body,
        });
        expect([r.status, r.body]).toEqual([202, expect.anything()]);
        return r.body.data.deployment.id;
      };
      const inProject = await deploy(apiA, { name: 'a-in-project', projectId });
      const orgWide = await deploy(apiA, { name: 'a-org-wide' });
      const ofB = await deploy(apiB, { name: 'b-own' });

      const final = (s: { statuses(): StatusData[] }, id: string) =>
        eventually(
          async () => s.statuses().find((e) => e.deploymentId === id && e.status === 'failed'),
          `the failure of ${id}`,
          120_000,
        );
      // Every change arrives, to the end, with what happened and when.
      const failedA = await final(streamA, inProject);
      expect(failedA).toEqual({
        deploymentId: inProject,
        status: 'failed',
        message: expect.any(String),
        at: expect.any(String),
      });
      await final(streamA, orgWide);
      await final(streamDev, orgWide);
      await final(streamB, ofB);
      // What the record says happened is what was streamed, in order (repeats of one status are not sent twice).
      const record = (await apiA.get<{ events: { status: string }[] }>(`/compat/deployments/${orgWide}`)).body;
      const streamed = streamA
        .statuses()
        .filter((e) => e.deploymentId === orgWide)
        .map((e) => e.status);
      expect(streamed.at(-1)).toBe(record.events.at(-1)!.status);
      expect(record.events.map((e) => e.status)).toEqual(expect.arrayContaining(streamed));

      // The streams stay open (heartbeats) and carry nothing that is not their caller's to see.
      await eventually(async () => (streamB.raw().includes(': heartbeat') ? true : undefined), 'a heartbeat');
      expect([...streamB.ids()]).toEqual([ofB]);
      expect(streamB.raw()).not.toContain(inProject);
      expect(streamB.raw()).not.toContain(orgWide);
      expect([...streamDev.ids()]).toEqual([orgWide]);
      expect(streamDev.raw()).not.toContain(inProject);
      expect([...streamA.ids()].sort()).toEqual([inProject, orgWide].sort());
      expect(streamA.raw()).not.toContain(ofB);

      // A destroy is told to those who saw the deployment.
      expect((await apiA.call('DELETE', `/platform/deployments/${orgWide}`)).status).toBe(204);
      await eventually(
        async () =>
          streamDev.events.find((e) => e.event === 'destroyed' && e.data === JSON.stringify({ deploymentId: orgWide })),
        'the destroy',
      );
      expect(streamB.raw()).not.toContain(orgWide);
    } finally {
      await Promise.all([streamA.close(), streamDev.close(), streamB.close()]);
    }
  }, 240_000);

  it('refuses a caller without deployment.read, and a query it does not know', async () => {
    const a = await h.newOrg('pro');
    const noRead = (
      await h.identity.createToken({ orgId: a.orgId, userId: a.userId, name: 'x', scopes: ['deployment.logs'] })
    ).token;
    const r = await fetch(`${h.baseUrl}/platform/deployment-events`, {
      headers: { authorization: `Bearer ${noRead}` },
    });
    expect(r.status).toBe(403);
    const q = await fetch(`${h.baseUrl}/platform/deployment-events?since=1`, {
      headers: { authorization: `Bearer ${a.token}` },
    });
    expect(q.status).toBe(400);
  });
});
