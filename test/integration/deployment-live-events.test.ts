import { randomUUID } from 'node:crypto';
import net from 'node:net';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

import { createLogStore } from '@shared/deployments/logs-store';
import { announcingLogs, createStatusFeed } from '@shared/deployments/status-feed';

import { client } from '../helpers/client';
import { edgeAgent, edgeGet } from '../helpers/edge';
import { eventually, type Harness, startHarness } from '../helpers/harness';
import { buildFixtureImage } from '../helpers/images';
import { readResult } from '../helpers/mcp';

type Body = Record<string, unknown>;
interface Received extends EventSourceMessage {
  /** When the client had it (ms). */
  receivedAt: number;
}
interface LogData {
  timestamp: string;
  stream: string;
  message: string;
  instance?: string;
}
interface CommandData {
  id: string;
  command: string;
  state: string;
  revision?: number;
}

const HEARTBEAT_MS = 300;
const MAX_BUFFERED = 64 * 1024;

/**
 * The event stream as a live view of a running deployment (real engine, Temporal, edge router): it stays open after
 * the deployment settles, carries each command's progress and the instances' own output as they write it, resumes
 * from any event's ID, keeps an idle connection alive and lets go of a client that does not read.
 */
describe('GET /platform/deployments/{id}/events, live: app output, commands, resume, heartbeats, slow clients', () => {
  let h: Harness;
  const apiLog: string[] = [];
  const agent = edgeAgent();
  let d: { id: string; token: string; url: string; api: ReturnType<typeof client> };

  beforeAll(async () => {
    h = await startHarness(
      'live-events',
      {
        LOG_LEVEL: 'warn',
        EVENTS_HEARTBEAT_MS: String(HEARTBEAT_MS),
        EVENTS_MAX_BUFFERED_BYTES: String(MAX_BUFFERED),
        RATE_LIMIT_PLATFORM_PER_15MIN: '1000',
        RATE_LIMIT_COMPAT_READS_PER_MIN: '1000',
        DEPLOY_READY_TIMEOUT_S: '30',
      },
      { logDestination: { write: (line: string) => void apiLog.push(line) } },
    );
    const image = await buildFixtureImage(h.docker, 'env-hello');
    const org = await h.newOrg();
    const api = client(h, org.token);
    const r = await api.post<Body>('/compat/deploy', {
      image,
      name: `live-${randomUUID().slice(0, 6)}`,
      port: 8080,
      envVars: { GREETING: 'hello' },
    });
    expect(r.status).toBe(202);
    const id = String(r.body.deploymentId);
    const running = await api.waitFor(id, ['running', 'failed']);
    expect(running.status).toBe('running');
    d = { id, token: org.token, url: String(running.url), api };
  });
  afterAll(async () => {
    await d?.api.destroyAndWait(d.id);
    await agent.close();
    await h?.stop();
  });

  /** Makes the app write `said <text>` to its stderr. */
  async function say(text: string) {
    const r = await edgeGet(`${d.url}/cgi-bin/say?${text}`, { agent });
    expect(r.status).toBe(200);
  }

  /** An open stream read in the background, each event stamped with when it arrived; heartbeats are counted. */
  async function open(lastEventId?: string) {
    const res = await fetch(`${h.baseUrl}/platform/deployments/${d.id}/events`, {
      headers: { authorization: `Bearer ${d.token}`, ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
    });
    expect(res.status).toBe(200);
    const events: Received[] = [];
    let heartbeats = 0;
    let ended = false;
    const parser = createParser({
      onEvent: (e) => events.push({ ...e, receivedAt: Date.now() }),
      onComment: (c) => {
        if (c.trim() === 'heartbeat') heartbeats++;
      },
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    void (async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read()) parser.feed(r.value);
    })()
      // Cancelled by the test itself.
      .catch(() => undefined)
      .finally(() => (ended = true));
    return {
      events,
      get heartbeats() {
        return heartbeats;
      },
      get ended() {
        return ended;
      },
      /** The first event (after `from`) for which `match` holds. */
      next: (match: (e: Received) => boolean, what: string, from = 0) =>
        eventually(
          async () => {
            const found = events.slice(from).find(match);
            if (!found && ended) throw new Error(`the stream ended before ${what}: ${JSON.stringify(events)}`);
            return found;
          },
          what,
          60_000,
        ),
      close: () => reader.cancel(),
    };
  }

  const isLine = (text: string) => (e: Received) =>
    e.event === 'log' && (JSON.parse(e.data) as LogData).message === `said ${text}`;
  const appLines = (events: Received[]) =>
    events.filter((e) => e.event === 'log' && (JSON.parse(e.data) as LogData).instance !== undefined);

  it('stays open after running, delivers app lines as written, and carries a redeploy’s progress and new instances', async () => {
    const s = await open();
    const settled = await s.next((e) => e.event === 'settled', 'settled');
    expect(JSON.parse(settled.data)).toEqual({ status: 'running' });

    const first = `first-${randomUUID().slice(0, 8)}`;
    await say(first);
    const line = await s.next(isLine(first), `the app line ${first}`);
    const data = JSON.parse(line.data) as LogData;
    expect(data).toMatchObject({ stream: 'stderr', instance: expect.any(String) });
    // From the engine's record of the write to the client's hands: the figure the stream is built to keep under 1 s.
    const latencyMs = line.receivedAt - Date.parse(data.timestamp);
    console.log(`app line reached the event stream's client ${latencyMs} ms after the app wrote it`);

    const redeploy = await d.api.post<{ data: { command: { id: string } } }>(`/platform/deployments/${d.id}/redeploy`, {
      envVars: { GREETING: 'again' },
    });
    expect(redeploy.status).toBe(202);
    const commandId = redeploy.body.data.command.id;
    const ofCommand = (e: Received) => e.event === 'command' && (JSON.parse(e.data) as CommandData).id === commandId;
    const done = await s.next(
      (e) => ofCommand(e) && ['succeeded', 'failed'].includes((JSON.parse(e.data) as CommandData).state),
      'the redeploy’s end',
    );
    // Nothing in progress any more: `settled` again, what a follower of the command (the CLI) stops at.
    await s.next((e) => e.event === 'settled', 'settled after the redeploy', s.events.indexOf(done));
    const progress = s.events.filter(ofCommand).map((e) => JSON.parse(e.data) as CommandData);
    expect(progress.map((c) => [c.command, c.state])).toEqual([
      ['redeploy', 'accepted'],
      ['redeploy', 'started'],
      ['redeploy', 'succeeded'],
    ]);
    const record = (await d.api.get<{ revision: number }>(`/compat/deployments/${d.id}`)).body;
    expect(progress.at(-1)!.revision).toBe(record.revision);
    expect(record.revision).toBeGreaterThan(1);
    // The redeploy's own status changes came on the same stream, before its end.
    const statuses = s.events
      .slice(s.events.indexOf(settled), s.events.indexOf(done))
      .filter((e) => e.event === 'status')
      .map((e) => (JSON.parse(e.data) as { message: string }).message);
    expect(statuses.some((m) => m.includes(`release ${record.revision} serves`))).toBe(true);

    // The new release's instance is followed: its line comes, from another instance than the first line's.
    const second = `second-${randomUUID().slice(0, 8)}`;
    await say(second);
    const again = JSON.parse((await s.next(isLine(second), `the new release's line ${second}`)).data) as LogData;
    expect(again.instance).toEqual(expect.any(String));
    expect(again.instance).not.toBe(data.instance);

    // Idle between events, the connection carried heartbeats; the stream is still open.
    expect(s.heartbeats).toBeGreaterThan(0);
    expect(s.ended).toBe(false);
    await s.close();
  });

  it('resumes from an app line’s ID with every later line once: no repeat, no gap, even for lines written meanwhile', async () => {
    const tag = randomUUID().slice(0, 8);
    const s1 = await open();
    await s1.next((e) => e.event === 'settled', 'settled');
    for (const n of [1, 2, 3]) {
      await say(`${tag}-${n}`);
      await s1.next(isLine(`${tag}-${n}`), `line ${n}`);
    }
    await s1.close();
    // Written while nobody followed: the resume reads it back from the engine.
    await say(`${tag}-4`);
    const cut = s1.events.find(isLine(`${tag}-1`))!;

    const s2 = await open(cut.id);
    await s2.next(isLine(`${tag}-4`), 'line 4 on the resumed stream');
    const seen = (events: Received[]) => events.map((e) => [e.id, e.event, e.data]);
    const before = s1.events.slice(s1.events.indexOf(cut) + 1);
    expect(seen(s2.events.slice(0, before.length))).toEqual(seen(before));
    expect(appLines(s2.events).map((e) => (JSON.parse(e.data) as LogData).message)).toEqual([
      `said ${tag}-2`,
      `said ${tag}-3`,
      `said ${tag}-4`,
    ]);
    // Nothing of what came before the cut (status history, commands, the first line) is sent again.
    expect(s2.events.filter((e) => e.event !== 'log')).toEqual([]);
    await s2.close();
  });

  it('drops a client that reads nothing once its buffer passes the cap, and goes on serving others', async () => {
    // A raw connection that sends its request and never reads the answer.
    const url = new URL(`${h.baseUrl}/platform/deployments/${d.id}/events`);
    const socket = net.connect(Number(url.port), url.hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.pause();
    socket.write(
      `GET ${url.pathname} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: Bearer ${d.token}\r\naccept: text/event-stream\r\n\r\n`,
    );
    let received = 0;
    let tail = '';
    let closed = false;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
      tail = (tail + chunk.toString('latin1')).slice(-8192);
    });
    socket.on('close', () => (closed = true));
    socket.on('error', () => undefined);

    // Far more than the socket's buffers and the cap hold: platform lines, as the worker writes and announces them.
    const logs = announcingLogs(
      createLogStore(h.db),
      createStatusFeed({ redis: h.redis, keyPrefix: h.config.REDIS_KEY_PREFIX }),
    );
    const line = 'x'.repeat(4000);
    let written = 0;
    for (let batch = 0; batch < 40 && !apiLog.some((l) => l.includes('reads too slowly')); batch++) {
      await logs.append(
        d.id,
        'system',
        Array.from({ length: 100 }, () => line),
      );
      written += 100 * line.length;
    }
    await eventually(
      async () => apiLog.find((l) => l.includes('reads too slowly')),
      'the api dropping the slow client',
    );
    // Lines after the drop are not buffered for it any more.
    for (let batch = 0; batch < 5; batch++) {
      await logs.append(
        d.id,
        'system',
        Array.from({ length: 100 }, () => line),
      );
      written += 100 * line.length;
    }
    // Reading now, within the grace: what was buffered arrives, then the event saying why, then the end.
    socket.resume();
    await eventually(async () => closed || undefined, 'the slow client’s connection closing', 30_000);
    expect(received).toBeLessThan(written);
    expect(tail).toMatch(/event: error\ndata: \{"message":"The client read too slowly/);

    // The server is fine, and a reading client follows the same deployment as before.
    expect((await fetch(`${h.baseUrl}/healthz`)).status).toBe(200);
    const s = await open();
    await s.next((e) => e.event === 'settled', 'settled on a new stream');
    await s.close();
  });

  it('MCP get_logs with follow answers the lines written within its window and a cursor that reads on after them', async () => {
    const mcp = new Client({ name: 'live-events-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${h.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${d.token}` } },
      }),
    );
    try {
      const tag = randomUUID().slice(0, 8);
      const follow = (args: Body) =>
        mcp.callTool({
          name: 'get_logs',
          arguments: { deploymentId: d.id, follow: true, ...args },
        }) as Promise<CallToolResult>;
      const firstCall = follow({ timeoutS: 4, stream: 'app' });
      await new Promise((r) => setTimeout(r, 1000));
      await say(`${tag}-a`);
      const first = readResult(await firstCall);
      expect(first.isError).toBe(false);
      expect(first.s.log).toContain(`said ${tag}-a`);
      expect(first.s.log).toMatch(/^<untrusted-log-[0-9a-f]+>/);
      expect(first.s.cursor).toEqual(expect.any(String));

      // Written between the calls: the cursor picks it up, and the first call's line is not repeated.
      await say(`${tag}-b`);
      const second = readResult(await follow({ timeoutS: 2, cursor: first.s.cursor }));
      expect(second.isError).toBe(false);
      expect(second.s.log).toContain(`said ${tag}-b`);
      expect(second.s.log).not.toContain(`said ${tag}-a`);

      const refused = readResult(await follow({ timeoutS: 600 }));
      expect(refused.isError).toBe(true);
    } finally {
      await mcp.close();
    }
  });
});
