import { createHash, randomUUID } from 'node:crypto';

import { createProjectStore } from '@shared/projects/store';

import { anthropic, openai, type ProviderDouble, startAnthropicDouble, startOpenAiDouble } from '../helpers/ai-doubles';
import { client } from '../helpers/client';
import { type Harness, startHarness } from '../helpers/harness';

type Body = Record<string, unknown>;
type Data<T = Body> = { data: T; message?: string };
interface Turn {
  turnId: string;
  status: 'completed' | 'failed';
  message: { content: string; checkpointId: string | null } | null;
  checkpoint: { id: string; seq: number } | null;
  error: { code: string; message: string } | null;
}
interface Session {
  head: { id: string; files: { path: string; sha256: string }[] } | null;
  checkpoints: { id: string; seq: number; parent: string | null; reason: string }[];
  messages: { role: string; content: string; reverted: boolean; turnId: string | null }[];
  runningTurn: { turnId: string } | null;
}
interface Sse {
  id: number;
  event: string;
  data: Body;
}

const sha = (s: string) => createHash('sha256').update(s).digest('hex');

/** Reads a Server-Sent Events answer to its end: the events as the stream carried them. */
async function readSse(res: Response): Promise<Sse[]> {
  const text = await res.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('event:'))
    .map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l.startsWith(`${name}: `))
          ?.slice(name.length + 2) ?? '';
      return { id: Number(field('id')), event: field('event'), data: JSON.parse(field('data')) as Body };
    });
}

/** Model turns of builder sessions on the real stack (Temporal worker, FerretDB, MinIO, Redis), with both doubles. */
describe('builder turns', () => {
  let h: Harness;
  let oa: ProviderDouble;
  let an: ProviderDouble;
  let projects: ReturnType<typeof createProjectStore>;

  beforeAll(async () => {
    h = await startHarness('builder-turns', {
      ALLOW_PRIVATE_AI_PROVIDERS: 'true',
      AI_RETRY_ATTEMPTS: '2',
      AI_RETRY_MAX_DELAY_S: '1',
      AI_IDLE_TIMEOUT_S: '4',
      RATE_LIMIT_PLATFORM_PER_15MIN: '100000',
    });
    oa = await startOpenAiDouble({ models: ['gpt-4o-mini'] });
    an = await startAnthropicDouble({ models: ['claude-sonnet-4-20250514'] });
    projects = createProjectStore(h.db);
  });
  afterAll(async () => {
    await oa?.close();
    await an?.close();
    await h?.stop();
  });

  /** An org with a project, a session in it on the given double's provider, and its client. */
  async function session(d: ProviderDouble, kind: 'openai_compatible' | 'anthropic', apiKey = d.apiKey) {
    const o = await h.newOrg();
    const api = client(h, o.token);
    const projectId = randomUUID();
    const now = new Date();
    await projects.insert({
      _id: projectId,
      orgId: o.orgId,
      name: 'app',
      createdAt: now,
      updatedAt: now,
      createdBy: o.userId,
    });
    const providerId = (
      await api.post<Data>('/platform/ai-providers', {
        name: kind,
        kind,
        baseUrl: d.baseUrl,
        apiKey,
        defaultModel: kind === 'anthropic' ? 'claude-sonnet-4-20250514' : 'gpt-4o-mini',
      })
    ).body.data.id as string;
    const id = (await api.post<Data>('/platform/builder/sessions', { projectId, providerId })).body.data.id as string;
    const send = (content: string, extra: Body = {}) =>
      api.post<Data<Turn>>(`/platform/builder/sessions/${id}/messages`, { content, ...extra });
    const get = async () => (await api.get<Data<Session>>(`/platform/builder/sessions/${id}`)).body.data;
    return { ...o, api, id, providerId, projectId, send, get };
  }

  const writeIndex = {
    openai: (html: string) =>
      openai.toolCalls([
        { id: 'call_1', name: 'write_file', args: ['{"path":"index', `.html","content":${JSON.stringify(html)}}`] },
      ]),
    anthropic: (html: string) =>
      anthropic.message(
        [
          anthropic.toolUseBlock(0, 'toolu_1', 'write_file', [
            '{"path":"index.html",',
            `"content":${JSON.stringify(html)}}`,
          ]),
        ],
        { stopReason: 'tool_use' },
      ),
  };

  it.each([
    [
      'openai_compatible',
      () => oa,
      () => ({ stream: writeIndex.openai('<h1>Hello</h1>') }),
      () => ({ stream: openai.text(['Created ', 'index.html.']) }),
    ],
    [
      'anthropic',
      () => an,
      () => ({ stream: writeIndex.anthropic('<h1>Hello</h1>') }),
      () => ({ stream: anthropic.message([anthropic.textBlock(0, ['Created ', 'index.html.'])]) }),
    ],
  ] as const)(
    'a %s turn writes index.html through a tool call and ends with a checkpoint holding it',
    async (kind, double, first, second) => {
      const d = double();
      const s = await session(d, kind);
      const before = d.requests.length;
      d.reply(first(), second());
      const r = await s.send('Make a page that says Hello');
      expect(r.status).toBe(200);
      expect(r.body.data).toMatchObject({
        status: 'completed',
        error: null,
        message: { content: 'Created index.html.' },
      });
      const head = (await s.get()).head!;
      expect(head.id).toBe(r.body.data.checkpoint!.id);
      expect(head.files).toEqual([{ path: 'index.html', sha256: sha('<h1>Hello</h1>'), size: 14 }]);
      // The model got the tools, then the tool's result and the file tree with the new file.
      const [call1, call2] = d.requests.slice(before).map((q) => JSON.stringify(q.body));
      expect(call1).toContain('write_file');
      expect(call2).toContain('Wrote index.html (14 bytes)');
      expect(call2).toContain('index.html (14 bytes)');
    },
  );

  it('streams the turn in order, and a reconnect with Last-Event-ID resumes without loss', async () => {
    const s = await session(oa, 'openai_compatible');
    oa.reply({ stream: writeIndex.openai('<p>streamed</p>') }, { stream: openai.text(['One ', 'two ', 'three.']) });
    const res = await fetch(`${h.baseUrl}/platform/builder/sessions/${s.id}/messages/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'stream it', idempotencyKey: 'k-1' }),
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readSse(res);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => e.event);
    expect(types[0]).toBe('turn.started');
    expect(types.at(-1)).toBe('turn.completed');
    expect(types.indexOf('file.write')).toBeLessThan(types.indexOf('checkpoint.created'));
    expect(types.indexOf('checkpoint.created')).toBeLessThan(types.indexOf('turn.completed'));
    expect(
      events
        .filter((e) => e.event === 'message.delta')
        .map((e) => e.data.text)
        .join(''),
    ).toBe('One two three.');
    const turnId = events[0]!.data.turnId as string;

    for (const [url, init] of [
      [`${h.baseUrl}/platform/builder/sessions/${s.id}/turns/${turnId}/events`, { method: 'GET' }],
      // The same message again with its idempotencyKey attaches to the same turn: no second model call.
      [
        `${h.baseUrl}/platform/builder/sessions/${s.id}/messages/stream`,
        { method: 'POST', body: JSON.stringify({ content: 'stream it', idempotencyKey: 'k-1' }) },
      ],
    ] as const) {
      const calls = oa.requests.length;
      const again = await fetch(url, {
        ...init,
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json', 'last-event-id': '2' },
      });
      expect(await readSse(again)).toEqual(events.slice(2));
      expect(oa.requests.length).toBe(calls);
    }
    const other = await session(oa, 'openai_compatible');
    const foreign = await fetch(`${h.baseUrl}/platform/builder/sessions/${s.id}/turns/${turnId}/events`, {
      headers: { authorization: `Bearer ${other.token}` },
    });
    expect(foreign.status).toBe(404);
  });

  it('revert then a new message keeps every checkpoint reachable and marks the undone messages', async () => {
    const s = await session(oa, 'openai_compatible');
    const v1 = (
      await s.api.call<Data<{ checkpoint: { id: string } }>>('PUT', `/platform/builder/sessions/${s.id}/files`, {
        files: [{ path: 'index.html', content: 'v1' }],
      })
    ).body.data.checkpoint.id;
    oa.reply({ stream: writeIndex.openai('v2') }, { stream: openai.text(['v2 written']) });
    const v2 = (await s.send('make v2')).body.data.checkpoint!.id;
    const reverted = await s.api.post<Data<{ id: string }>>(`/platform/builder/sessions/${s.id}/revert`, {
      checkpointId: v1,
      expectedHead: v2,
    });
    expect(reverted.status).toBe(200);
    oa.reply({ stream: writeIndex.openai('v3') }, { stream: openai.text(['v3 written']) });
    const v4 = (await s.send('make v3')).body.data.checkpoint!.id;

    const after = await s.get();
    expect(after.checkpoints.map((c) => [c.id, c.reason])).toEqual([
      [v4, 'turn'],
      [reverted.body.data.id, 'revert'],
      [v2, 'turn'],
      [v1, 'save'],
    ]);
    // Each checkpoint's parent is the one before: every earlier checkpoint is on the head's chain.
    expect(after.checkpoints.map((c) => c.parent)).toEqual([reverted.body.data.id, v2, v1, null]);
    expect(after.head!.files[0]!.sha256).toBe(sha('v3'));
    // The v2 turn came after v1, which the session was reverted to: its messages are kept and marked.
    expect(after.messages.map((m) => [m.content, m.reverted])).toEqual([
      ['make v2', true],
      ['v2 written', true],
      ['make v3', false],
      ['v3 written', false],
    ]);
    // Reverting to v1 again undoes the v3 turn's messages too.
    await s.api.post(`/platform/builder/sessions/${s.id}/revert`, { checkpointId: v1 });
    expect((await s.get()).messages.map((m) => m.reverted)).toEqual([true, true, true, true]);
    const stale = await s.api.post(`/platform/builder/sessions/${s.id}/revert`, { checkpointId: v2, expectedHead: v4 });
    expect(stale.status).toBe(409);
  });

  it('retries a 429, then ends the turn with rate_limited, and the session takes the next message', async () => {
    const s = await session(oa, 'openai_compatible');
    const before = oa.requests.length;
    oa.reply(openai.rateLimited('0'), openai.rateLimited('0'), openai.rateLimited('0'));
    const limited = await s.send('hello');
    expect(limited.body.data).toMatchObject({ status: 'failed', checkpoint: null, error: { code: 'rate_limited' } });
    expect(oa.requests.length - before).toBe(3); // the first call and AI_RETRY_ATTEMPTS=2 retries
    expect((await s.get()).runningTurn).toBeNull();

    oa.reply({ stream: openai.text(['Back.']) });
    expect((await s.send('again')).body.data).toMatchObject({ status: 'completed', message: { content: 'Back.' } });
  });

  it('ends a turn whose key is refused with provider_auth, and runs one turn at a time', async () => {
    const bad = await session(an, 'anthropic', 'sk-ant-api03-wrong');
    const refused = await bad.send('hello');
    expect(refused.body.data).toMatchObject({ status: 'failed', error: { code: 'provider_auth' } });
    expect(JSON.stringify(refused.body)).not.toContain('sk-ant-api03-wrong');

    const s = await session(an, 'anthropic');
    an.reply({ stream: [anthropic.messageStart(5), anthropic.ping], hang: true });
    const first = s.send('slow one');
    let running: string | undefined;
    while (!running) running = (await s.get()).runningTurn?.turnId;
    const second = await s.send('second');
    expect(second.status).toBe(409);
    expect(second.body.message).toContain(running);
    expect((await first).body.data).toMatchObject({
      turnId: running,
      status: 'failed',
      error: { code: 'provider_unavailable' },
    });
    an.reply({ stream: anthropic.message([anthropic.textBlock(0, ['Now.'])]) });
    expect((await s.send('third')).body.data.status).toBe('completed');
  });

  it("refuses another organisation's provider and session", async () => {
    const a = await session(oa, 'openai_compatible');
    const b = await session(oa, 'openai_compatible');
    expect(
      (await a.api.call('PUT', `/platform/builder/sessions/${a.id}/provider`, { providerId: b.providerId })).status,
    ).toBe(404);
    expect((await b.api.post(`/platform/builder/sessions/${a.id}/messages`, { content: 'x' })).status).toBe(404);
  });

  it('measures the time to the first streamed event after a message (median of 10, printed)', async () => {
    const s = await session(oa, 'openai_compatible');
    const times: number[] = [];
    for (let i = 0; i < 10; i++) {
      oa.reply({ stream: openai.text(['ok']) });
      const t0 = performance.now();
      const res = await fetch(`${h.baseUrl}/platform/builder/sessions/${s.id}/messages/stream`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: `ping ${i}` }),
      });
      const reader = res.body!.getReader();
      let seen = '';
      while (!seen.includes('event: ')) seen += new TextDecoder().decode((await reader.read()).value);
      times.push(performance.now() - t0);
      while (!(await reader.read()).done);
    }
    times.sort((x, y) => x - y);
    console.log(
      `builder: time to first streamed event, median of 10: ${((times[4]! + times[5]!) / 2).toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times[9]!.toFixed(1)})`,
    );
    expect(times).toHaveLength(10);
  });
});
